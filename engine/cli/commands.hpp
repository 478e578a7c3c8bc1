#pragma once
/// @file commands.hpp
/// Subcommands of the `dpmu` executable. Each `add_*` registers a CLI11 subcommand
/// whose callback prints JSON on stdout; errors propagate as exceptions to main().

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace dpmu::cli {

/// Each release command registers itself and its `dpmu audit <command>` twin (audit_command.hpp).
/// `dpmu test`: non-private and DP tests of nested linear models (paper §4).
void add_test_command(CLI::App& app, CLI::App& audit);

/// `dpmu plan-test`: choose M and censoring limits by simulated MSE (paper §4.5).
void add_plan_test_command(CLI::App& app);
/// `dpmu plan-bma`: simulate what a private model-averaging release would deliver (docs/bma.md).
void add_plan_bma_command(CLI::App& app);
/// `dpmu run CONFIG --out FILE.h5 ...`: run a study (Monte Carlo engine), and
/// `dpmu replay CONFIG --cell C --replicate R`: recompute one replicate.
void add_run_command(CLI::App& app);

/// `dpmu merge`, `dpmu summarize`, `dpmu compare`, `dpmu errors`, `dpmu export`: results files.
void add_results_commands(CLI::App& app);

/// `dpmu bma`: DP Bayesian model averaging by sufficient-statistic perturbation (paper §5).
void add_bma_command(CLI::App& app, CLI::App& audit);
/// `dpmu select`: DP model selection of Lei et al. (2018), Algorithms 1 and 2 (docs/methods.md §6).
void add_select_command(CLI::App& app, CLI::App& audit);

/// A count option read in 64 bits, checked against [lowest, highest] before any work and returned as
/// an int (highest ≤ INT_MAX): a value beyond the limit is refused naming the option and the limit,
/// never wrapped. @throws std::invalid_argument.
int count_option(const std::string& option, std::int64_t value, std::int64_t lowest, std::int64_t highest);

/// CLI11 validator for an unsigned integer option (seeds, counts): only decimal digits, at most
/// 2^64 − 1. CLI11 would otherwise wrap "-1" and saturate "2^64" silently.
const CLI::Validator& unsigned_integer();
/// unsigned_integer() without 0: a count whose default is not 0 and for which 0 means nothing
/// (`--mcmc-max-iterations`: R and Python refuse 0 too).
const CLI::Validator& positive_integer();

/// Refuse an output file that would overwrite one of `inputs` (same file, by path equivalence) or,
/// unless `force`, any existing file; and one whose folder does not exist. Called before any work.
/// @throws std::invalid_argument naming the option and the file.
void check_new_output_file(const std::string& option, const std::string& path, const std::vector<std::string>& inputs,
                           bool force);

/// `dpmu describe [EXPERIMENT]`: parameters and metrics of the registered experiments (docs/configs.md).
void add_describe_command(CLI::App& app);

/// `dpmu ledger FILE`: privacy loss recorded in a privacy-budget ledger, per data set (basic composition).
void add_ledger_command(CLI::App& app);

/// What the running command is doing, e.g. "reading the results file a.h5", for main()'s
/// "out of memory while ..." message. Set by the commands as they go; empty: the command's name.
void set_activity(std::string what);
const std::string& activity();

}  // namespace dpmu::cli
