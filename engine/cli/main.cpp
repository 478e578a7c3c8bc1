// dpmu: differentially private methods for model uncertainty in linear regression.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>

#include "commands.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/core/cpu_features.hpp"
#include "dpmu/experiments/registry.hpp"

#ifndef DPMU_VERSION
#define DPMU_VERSION "unknown"
#endif
#ifndef DPMU_GIT_SHA
#define DPMU_GIT_SHA "unknown"
#endif

namespace {
/// std::terminate (an exception escaping a thread or a destructor) still says what happened: an
/// allocation failure is reported like every other out-of-memory (exit 2); anything else is a bug.
[[noreturn]] void on_terminate() {
  std::string what = "unknown";
  bool out_of_memory = false;
  if (const auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  }
  const std::string& doing = dpmu::cli::activity();
  if (out_of_memory) {
    std::fprintf(stderr, "dpmu: error: out of memory while %s; free memory or raise the limit (ulimit -v)\n",
                 doing.empty() ? "running" : doing.c_str());
    std::_Exit(2);
  }
  std::fprintf(stderr, "dpmu: internal error (%s) while %s%s\n", what.c_str(),
               doing.empty() ? "running" : doing.c_str(),
               " (under a memory limit, ulimit -v, this can be a failed allocation)");
  std::abort();
}
/// What an error after a charge adds to its message (docs/reliability.md: charged, not delivered):
/// the release's noise was drawn and charged, so the spend stands though nothing was delivered.
std::string charged_not_delivered() {
  const auto& charges = dpmu::api::charges_on_this_thread();
  if (charges.count == 0) return {};
  return "; the release was charged to ledger " + charges.last_ledger +
         " (charged, not delivered: its noise was drawn, so the spend stands)";
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
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
  dpmu::cli::add_plan_bma_command(app);
  dpmu::cli::add_select_command(app, *audit);
  dpmu::cli::add_run_command(app);
  dpmu::cli::add_results_commands(app);
  dpmu::cli::add_bma_command(app, *audit);
  dpmu::cli::add_ledger_command(app);
  dpmu::cli::add_describe_command(app);
  dpmu::experiments::register_builtin_experiments();
  // A file-size limit (ulimit -f) must make write(2) fail with EFBIG, which every writer reports
  // naming the file, instead of killing the process with SIGXFSZ mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  // A signal between a release's noise draw and its charge is delivered after the charge, and one
  // after the charge ends the process with "charged, not delivered" (docs/privacy.md).
  dpmu::api::defer_interrupts_around_charges("dpmu");
  if (const char* simd = dpmu::core::simd_cap_invalid_value()) {
    std::fprintf(stderr, "dpmu: DPMU_SIMD='%s' is not generic, avx2, avx512 or native; ignored\n", simd);
  }
  try {
    app.parse(argc, argv);
  } catch (const std::bad_alloc&) {
    // Every command: a clear message and exit 2, never "terminate called after throwing std::bad_alloc".
    std::string what = dpmu::cli::activity();
    if (what.empty()) {
      what = "running dpmu";
      for (const auto* sub : app.get_subcommands()) what += " " + sub->get_name();
    }
    std::cerr << "dpmu: error: out of memory while " << what
              << "; free memory, raise the limit (ulimit -v) or use a machine with more memory\n";
    return 2;
  } catch (const CLI::RuntimeError& e) {
    return app.exit(e);  // a command's own exit code (1 differences/failed cells, 3 stopped early)
  } catch (const CLI::ParseError& e) {
    // --help / --version exit 0; every other command-line error is bad input: exit code 2 (README).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "dpmu: error: " << e.what() << charged_not_delivered() << "\n";
    return 2;
  }
  // What a command printed must have reached standard output: a full disk, /dev/full or a closed
  // pipe behind `> out.json` is a lost result, never exit 0 (docs/reliability.md).
  std::cout.flush();
  errno = 0;
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::cerr << "dpmu: error: cannot write the output to standard output"
              << (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) << "; the result is lost"
              << charged_not_delivered() << ": free space and run again\n";
    return 2;
  }
  return 0;
}
