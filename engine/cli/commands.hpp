#pragma once
/// @file commands.hpp
/// Subcommands of the `dpmu` executable. Each `add_*` registers a CLI11 subcommand
/// whose callback prints JSON on stdout; errors propagate as exceptions to main().

#include <CLI/CLI.hpp>

namespace dpmu::cli {

/// `dpmu test`: non-private and DP tests of nested linear models (paper §4).
void add_test_command(CLI::App& app);

/// `dpmu bma`: DP Bayesian model averaging by sufficient-statistic perturbation (paper §5).
void add_bma_command(CLI::App& app);

}  // namespace dpmu::cli
