// `--sep` and the CSV reading shared by the commands that read a data file.
#include "data_options.hpp"

#include <cmath>
#include <iostream>

#include "dpmu/core/checks.hpp"

namespace dpmu::cli {

void add_separator_option(CLI::App* cmd, std::string& sep) {
  cmd->add_option("--sep", sep,
                  "Field separator of the CSV file: auto (comma, or ';' or tab when the header is one field "
                  "containing it), ',', ';' or tab")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) {
            try {
              runtime::parse_csv_separator(s);
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
            return std::string();
          },
          "SEP"));
}

runtime::DataTable read_data_file(const char* command, const std::string& path, std::span<const std::string> wanted,
                                  const std::string& sep) {
  runtime::CsvOptions options;
  options.separator = runtime::parse_csv_separator(sep);
  runtime::DataTable table = runtime::read_csv(path, wanted, options);
  if (table.separator_detected() && table.separator() != ',') {
    std::cerr << command << ": note: " << runtime::printable(path) << ": fields separated by "
              << runtime::describe_csv_separator(table.separator())
              << " (detected from the header; --sep chooses another)\n";
  }
  return table;
}

void check_epsilon_floor(const char* command, const char* option, double epsilon) {
  if (!(std::isfinite(epsilon) && epsilon >= kMinimumEpsilon)) {
    dpmu::core::throw_domain(command, option, epsilon,
                             "at least 1e-12 (a smaller epsilon adds noise more than 10^12 times the sensitivity, "
                             "so no statistic survives, and is beyond what the exact noise samplers can draw)");
  }
}

}  // namespace dpmu::cli
