// `dpmu ledger FILE`: the privacy loss recorded in a privacy-budget ledger against its budget, with
// the releases grouped by data fingerprint (dpmu/runtime/ledger.hpp); `dpmu ledger init FILE
// --budget` creates a ledger; `dpmu ledger set-budget FILE --budget --reason` records a new budget.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/runtime/ledger.hpp"

namespace dpmu::cli {

namespace {

void print_ledger(const std::string& path, const std::string& format) {
  if (format == "json") {
    std::cout << api::json_text(api::ledger_summary(path), 2) << "\n";
    return;
  }
  const runtime::Ledger ledger = runtime::read_ledger(path);
  const auto& entries = ledger.entries;
  const auto totals = runtime::ledger_totals(entries);
  const runtime::LedgerTotal total = ledger.total();
  const runtime::Budget budget = ledger.budget();
  std::cout << fmt::format(
      "ledger {}: {} release(s); spent epsilon={:.6g}, delta={:.6g} of the budget epsilon={:.6g}, delta={:.6g} "
      "(basic composition: sums)\n",
      path, entries.size(), total.epsilon, total.delta, budget.epsilon, budget.delta);
  for (const auto& c : ledger.budget_changes) {
    std::cout << fmt::format("budget changed {} to epsilon={:.6g}, delta={:.6g}: {}\n", c.time, c.budget.epsilon,
                             c.budget.delta, c.reason);
  }
  for (const auto& [fingerprint, t] : totals) {
    std::string files;
    for (const auto& f : t.data_files) files += (files.empty() ? "" : ", ") + f;
    std::cout << fmt::format("\ndata fingerprint {}\n  data: {}\n", fingerprint.substr(0, 16), files);
    std::cout << fmt::format("  {:<22} {:<24} {:>12} {:>12}\n", "time", "command", "epsilon", "delta");
    for (const auto& e : entries) {
      if (e.data_fingerprint != fingerprint) continue;
      std::cout << fmt::format("  {:<22} {:<24} {:>12.6g} {:>12.6g}\n", e.time, e.command, e.epsilon, e.delta);
    }
    std::cout << fmt::format("  {:<47} {:>12.6g} {:>12.6g}\n", fmt::format("total ({} release(s))", t.releases),
                             t.epsilon, t.delta);
  }
}

}  // namespace

void add_ledger_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("json");
  auto* cmd = app.add_subcommand(
      "ledger",
      "Print the privacy loss recorded in a privacy-budget ledger against its budget (basic composition); "
      "`ledger init` creates one, `ledger set-budget` records a new budget");
  cmd->add_option("file", *file, "ledger file (one JSON object per line)")->check(CLI::ExistingFile);
  cmd->add_option("--format", *format, "json (default) or table")->check(CLI::IsMember({"json", "table"}));

  auto init_file = std::make_shared<std::string>();
  auto init_budget = std::make_shared<std::string>();
  auto* init = cmd->add_subcommand("init", "Create a ledger with its budget (and its key file FILE.key, mode 0600)");
  init->add_option("file", *init_file, "the new ledger file")->required();
  init->add_option("--budget", *init_budget, "EPS[,DELTA]: the total privacy loss the ledger allows")->required();
  init->callback([init_file, init_budget] {
    api::ledger_init(*init_file, *init_budget);
    std::cout << "created ledger " << *init_file << " with budget " << *init_budget << " (key in "
              << runtime::ledger_key_path(*init_file) << ": keep it with the ledger, never share it)\n";
  });

  auto set_file = std::make_shared<std::string>();
  auto set_budget = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  auto* set = cmd->add_subcommand("set-budget", "Record a new budget for a ledger (an explicit act, with a reason)");
  set->add_option("file", *set_file, "the ledger file")->required()->check(CLI::ExistingFile);
  set->add_option("--budget", *set_budget, "EPS[,DELTA]: the new budget")->required();
  set->add_option("--reason", *reason, "why the budget changes (recorded)")->required();
  set->callback([set_file, set_budget, reason] {
    api::ledger_set_budget(*set_file, *set_budget, *reason);
    std::cout << "ledger " << *set_file << ": budget set to " << *set_budget << "\n";
  });

  cmd->callback([cmd, file, format] {
    if (!cmd->get_subcommands().empty()) return;
    if (file->empty()) throw std::invalid_argument("dpmu ledger: give the ledger FILE (or `init` / `set-budget`)");
    print_ledger(*file, *format);
  });
}

}  // namespace dpmu::cli
