// `dpmu ledger FILE`: the privacy loss recorded in a privacy-budget ledger, per data set (data
// fingerprint), totalled by basic composition (dpmu/runtime/ledger.hpp). JSON, or a table.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "dpmu/runtime/ledger.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

void print_ledger(const std::string& path, const std::string& format) {
  const std::vector<runtime::LedgerEntry> entries = runtime::read_ledger(path);
  const auto totals = runtime::ledger_totals(entries);
  if (format == "json") {
    Json data_sets = Json::object();
    for (const auto& [fingerprint, total] : totals) {
      Json releases = Json::array();
      for (const auto& e : entries) {
        if (e.data_fingerprint != fingerprint) continue;
        releases.push_back({{"time", e.time}, {"command", e.command}, {"epsilon", e.epsilon}, {"delta", e.delta}});
      }
      data_sets[fingerprint] = {{"data_files", total.data_files},
                                {"releases", total.releases},
                                {"epsilon", total.epsilon},
                                {"delta", total.delta},
                                {"release_list", releases}};
    }
    const Json out = {{"ledger", path},
                      {"composition", "basic (sequential): epsilon and delta are the sums over a data set's releases"},
                      {"entries", entries.size()},
                      {"data_sets", data_sets}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("ledger {}: {} release(s) on {} data set(s); totals by basic composition (sums)\n", path,
                           entries.size(), totals.size());
  for (const auto& [fingerprint, total] : totals) {
    std::string files;
    for (const auto& f : total.data_files) files += (files.empty() ? "" : ", ") + f;
    std::cout << fmt::format("\ndata set sha256 {}\n  files: {}\n", fingerprint, files);
    std::cout << fmt::format("  {:<22} {:<24} {:>12} {:>12}\n", "time", "command", "epsilon", "delta");
    for (const auto& e : entries) {
      if (e.data_fingerprint != fingerprint) continue;
      std::cout << fmt::format("  {:<22} {:<24} {:>12.6g} {:>12.6g}\n", e.time, e.command, e.epsilon, e.delta);
    }
    std::cout << fmt::format("  {:<47} {:>12.6g} {:>12.6g}\n", fmt::format("total ({} release(s))", total.releases),
                             total.epsilon, total.delta);
  }
}

}  // namespace

void add_ledger_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("json");
  auto* cmd = app.add_subcommand(
      "ledger", "Print the privacy loss recorded in a privacy-budget ledger, per data set (basic composition)");
  cmd->add_option("file", *file, "ledger file (one JSON object per line)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", *format, "json (default) or table")->check(CLI::IsMember({"json", "table"}));
  cmd->callback([file, format] { print_ledger(*file, *format); });
}

}  // namespace dpmu::cli
