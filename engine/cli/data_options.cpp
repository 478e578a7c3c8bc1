// `--sep` and the CSV reading shared by the commands that read a data file.
#include "data_options.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

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

DataFile read_data_file(const char* command, const std::string& path, std::span<const std::string> wanted,
                        const std::string& sep) {
  runtime::CsvOptions options;
  options.separator = runtime::parse_csv_separator(sep);
  std::string bytes;
  runtime::DataTable table = runtime::read_csv_once(path, bytes, wanted, options);
  if (table.separator_detected() && table.separator() != ',') {
    std::cerr << command << ": note: " << runtime::printable(path) << ": fields separated by "
              << runtime::describe_csv_separator(table.separator())
              << " (detected from the header; --sep chooses another)\n";
  }
  return {std::move(bytes), std::move(table)};
}

void default_ledger_from_environment(api::LedgerOptions& o, bool release) {
  if (!o.path.empty() || !release) return;
  const char* env = std::getenv("DPMU_LEDGER");
  if (env == nullptr || *env == '\0') return;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(env, ec);
  o.path = ec ? std::string(env) : absolute.string();
}

void add_ledger_options(CLI::App* cmd, api::LedgerOptions& o) {
  const auto* g = "Privacy budget";
  cmd->add_option("--ledger", o.path,
                  "Charge this release to the privacy-budget ledger FILE (checked before any work, charged when "
                  "computed and before anything is written; see `dpmu ledger`); a release that would exceed its "
                  "budget is refused. Default for a release: the "
                  "environment variable DPMU_LEDGER")
      ->group(g);
  cmd->add_option("--budget", o.budget,
                  "EPS[,DELTA]: create a missing --ledger with this budget (then fixed), or lower the limit for "
                  "this call (never above the ledger's budget)")
      ->group(g);
}

}  // namespace dpmu::cli
