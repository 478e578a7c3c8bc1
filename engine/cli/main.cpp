// dpmu: differentially private methods for model uncertainty in linear regression.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "dpmu/experiments/registry.hpp"

#ifndef DPMU_VERSION
#define DPMU_VERSION "unknown"
#endif
#ifndef DPMU_GIT_SHA
#define DPMU_GIT_SHA "unknown"
#endif

int main(int argc, char** argv) {
  CLI::App app{"dpmu " DPMU_VERSION
               ": differentially private methods for managing model uncertainty in linear regression\n"
               "(Peña & Barrientos, JMLR 25, 2024; Lei et al., JRSS A 2018)"};
  app.set_version_flag("--version", std::string("dpmu ") + DPMU_VERSION + " (" + DPMU_GIT_SHA + ")");
  app.require_subcommand(1);
  CLI::App* audit = app.add_subcommand(
      "audit", "Empirical privacy audit of a release command on neighbouring data sets (docs/privacy.md)");
  audit->require_subcommand(1);
  dpmu::cli::add_test_command(app, *audit);
  dpmu::cli::add_plan_test_command(app);
  dpmu::cli::add_select_command(app, *audit);
  dpmu::cli::add_run_command(app);
  dpmu::cli::add_results_commands(app);
  dpmu::cli::add_bma_command(app, *audit);
  dpmu::cli::add_ledger_command(app);
  dpmu::experiments::register_builtin_experiments();
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return app.exit(e);  // a command's own exit code (1 differences/failed cells, 3 stopped early)
  } catch (const CLI::ParseError& e) {
    // --help / --version exit 0; every other command-line error is bad input: exit code 2 (README).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "dpmu: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
