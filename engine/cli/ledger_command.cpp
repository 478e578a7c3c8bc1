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
  const auto budget_words = [](const runtime::Budget& b) {
    return b.is_zcdp() ? fmt::format("rho={:.6g}", b.rho)
                       : fmt::format("epsilon={:.6g}, delta={:.6g}", b.epsilon, b.delta);
  };
  std::cout << fmt::format(
      "ledger {}: {} release(s); spent epsilon={:.6g}, delta={:.6g} of the budget {} "
      "(basic composition: sums)\n",
      path, entries.size(), total.epsilon, total.delta, budget_words(budget));
  // The other totals, and which one the budget is checked with.
  const nlohmann::ordered_json summary = api::ledger_summary(path);
  const auto& all = summary["totals"];
  if (all.contains("tight")) {
    const auto& t = all["tight"];
    std::cout << fmt::format(
        "tight total: epsilon={} at delta={:.6g} (Gaussian releases {}, mu={:.6g}; pure {}; "
        "basic-composition releases {})\n",
        t["epsilon"].is_null() ? std::string("inf") : fmt::format("{:.6g}", t["epsilon"].get<double>()),
        t["delta"].get<double>(), t["gaussian"]["releases"].get<std::size_t>(), t["gaussian"]["mu"].get<double>(),
        t["pure"]["releases"].get<std::size_t>(), t["basic_composition"]["releases"].get<std::size_t>());
  }
  if (all.contains("zcdp")) {
    const auto& z = all["zcdp"];
    std::cout << (z["rho"].is_null() ? "zCDP total: none (" + z["why"].get<std::string>() + ")\n"
                                     : fmt::format("zCDP total: rho={:.6g}\n", z["rho"].get<double>()));
  }
  std::cout << fmt::format("the budget is checked with the {} accountant\n", summary["accountant"].get<std::string>());
  for (const auto& c : ledger.budget_changes) {
    std::cout << fmt::format("budget changed {} to {}: {}\n", c.time, budget_words(c.budget), c.reason);
  }
  for (const auto& [fingerprint, t] : totals) {
    std::string files;
    for (const auto& f : t.data_files) files += (files.empty() ? "" : ", ") + f;
    std::cout << fmt::format("\ndata fingerprint {}\n  data: {}\n", fingerprint.substr(0, 16), files);
    std::cout << fmt::format("  {:<22} {:<24} {:>12} {:>12}  {}\n", "time", "command", "epsilon", "delta", "mechanism");
    for (const auto& e : entries) {
      if (e.data_fingerprint != fingerprint) continue;
      std::cout << fmt::format("  {:<22} {:<24} {:>12.6g} {:>12.6g}  {}\n", e.time, e.command, e.epsilon, e.delta,
                               e.mechanism ? e.mechanism->kind : std::string("(not recorded)"));
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
      "Print the privacy loss recorded in a privacy-budget ledger against its budget (basic composition, the tight "
      "accountant's total and, where it applies, zCDP); `ledger init` creates one, `ledger set-budget` records a new "
      "budget");
  cmd->add_option("file", *file, "ledger file (one JSON object per line)")->check(CLI::ExistingFile);
  cmd->add_option("--format", *format, "json (default) or table")->check(CLI::IsMember({"json", "table"}));

  auto init_file = std::make_shared<std::string>();
  auto init_budget = std::make_shared<std::string>();
  auto init_accountant = std::make_shared<std::string>();
  auto* init = cmd->add_subcommand("init", "Create a ledger with its budget (and its key file FILE.key, mode 0600)");
  init->add_option("file", *init_file, "the new ledger file")->required();
  init->add_option("--budget", *init_budget, "EPS[,DELTA] or rho=RHO (zCDP): the total privacy loss the ledger allows")
      ->required();
  init->add_option("--accountant", *init_accountant,
                   "how the budget is checked, fixed for the ledger: basic (sums of epsilon and delta; the default, "
                   "conservative), tight (exact Gaussian-DP and optimal pure-DP composition at the budget's delta; "
                   "docs/privacy.md \"Accountants\") or zcdp (the default and only choice for a rho budget)")
      ->check(CLI::IsMember({"basic", "tight", "zcdp"}));
  init->callback([init_file, init_budget, init_accountant] {
    api::ledger_init(*init_file, *init_budget, *init_accountant);
    const runtime::Budget b = runtime::parse_budget(*init_budget);
    const std::string accountant =
        init_accountant->empty() ? runtime::accountant_name(runtime::default_accountant(b)) : *init_accountant;
    std::cout << "created ledger " << *init_file << " with budget " << *init_budget << " checked by the " << accountant
              << " accountant (key in " << runtime::ledger_key_path(*init_file)
              << ": keep it with the ledger, never share it)\n";
  });

  auto set_file = std::make_shared<std::string>();
  auto set_budget = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  auto* set = cmd->add_subcommand("set-budget", "Record a new budget for a ledger (an explicit act, with a reason)");
  set->add_option("file", *set_file, "the ledger file")->required()->check(CLI::ExistingFile);
  set->add_option("--budget", *set_budget, "EPS[,DELTA] (or rho=RHO for a zCDP ledger): the new budget")->required();
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
