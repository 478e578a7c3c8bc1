#pragma once
/// @file release_ledger.hpp
/// `--ledger FILE [--budget EPS[,DELTA]]` on the release commands: the budget check before any
/// noise is drawn, and the ledger line after the release (runtime/ledger.hpp; docs/privacy.md).

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "dpmu/core/release.hpp"
#include "dpmu/runtime/ledger.hpp"
#include "release_report.hpp"

namespace dpmu::cli {

/// The ledger options of a release command.
struct LedgerOptions {
  std::string ledger;  ///< empty: no ledger
  std::string budget;  ///< "EPS" or "EPS,DELTA"; needs --ledger
};

/// Add --ledger and --budget to a release command.
void add_ledger_options(CLI::App* cmd, LedgerOptions& options);

/// One release's use of the ledger. Construct it after the options are checked and the guarantee
/// is known, before any noise is drawn: it locks the ledger (held until destruction), fingerprints
/// the data file and refuses the release (runtime::BudgetExceeded, exit 2) if it would take the
/// data set's total past the budget. record() appends the line; call it before printing.
class ReleaseLedger {
 public:
  /// @param secure_release false for --seed / --non-private runs, which are not releases: a
  ///   ledger is then refused (std::invalid_argument). Does nothing without --ledger.
  ReleaseLedger(const LedgerOptions& options, std::string command, std::string data_file,
                const core::PrivacyGuarantee& guarantee, bool secure_release);
  /// Append the release (the names of the released fields of `report`).
  void record(const ReleaseReport& report);

 private:
  std::unique_ptr<runtime::LedgerLock> lock_;
  std::string command_, data_file_, fingerprint_;
  double epsilon_ = 0.0, delta_ = 0.0;
};

}  // namespace dpmu::cli
