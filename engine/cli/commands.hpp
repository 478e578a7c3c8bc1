#pragma once
/// @file commands.hpp
/// Subcommands of the `dpmu` executable. Each `add_*` registers a CLI11 subcommand
/// whose callback prints JSON on stdout; errors propagate as exceptions to main().

#include <CLI/CLI.hpp>

namespace dpmu::cli {

/// `dpmu test`: non-private and DP tests of nested linear models (paper §4).
void add_test_command(CLI::App& app);

/// `dpmu plan-test`: choose M and censoring limits by simulated MSE (paper §4.5).
void add_plan_test_command(CLI::App& app);
/// `dpmu run CONFIG --out FILE.h5 ...`: run a study (Monte Carlo engine), and
/// `dpmu replay CONFIG --cell C --replicate R`: recompute one replicate.
void add_run_command(CLI::App& app);

/// `dpmu merge`, `dpmu summarize`, `dpmu compare`: results files.
void add_results_commands(CLI::App& app);

/// `dpmu bma`: DP Bayesian model averaging by sufficient-statistic perturbation (paper §5).
void add_bma_command(CLI::App& app);
/// `dpmu select`: DP model selection of Lei et al. (2018), Algorithms 1 and 2 (METHODS.md §6).
void add_select_command(CLI::App& app);

/// `dpmu ledger FILE`: privacy loss recorded in a privacy-budget ledger, per data set (basic composition).
void add_ledger_command(CLI::App& app);

}  // namespace dpmu::cli
