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
/// is known, before any noise is drawn: under the ledger's lock it fingerprints the data file
/// (which must be a regular file), refuses the release (runtime::BudgetExceeded, exit 2) if it
/// would take the data set's total past the budget, and otherwise **charges it at once** — a run
/// that fails after its noise was drawn is charged too, and nothing is ever refunded.
/// verify_unchanged() (call it before printing) re-reads the fingerprint: a data file that changed
/// during the release is an error.
class ReleaseLedger {
 public:
  /// @param secure_release false for --seed / --non-private runs, which are not releases: a
  ///   ledger is then refused (std::invalid_argument). Does nothing without --ledger.
  /// @param released what the command releases (field names), recorded in the ledger line.
  ReleaseLedger(const LedgerOptions& options, const std::string& command, const std::string& data_file,
                const core::PrivacyGuarantee& guarantee, bool secure_release,
                const nlohmann::json& released = nlohmann::json::array());
  /// The checks that need no data (call them before reading the data): --budget needs --ledger and
  /// parses, no ledger for --seed / --non-private runs, --data a regular file.
  /// @throws std::invalid_argument naming the option.
  static void check_options(const LedgerOptions& options, const std::string& data_file, bool secure_release);
  /// @throws std::runtime_error if the data file's SHA-256 is no longer the one charged.
  void verify_unchanged() const;

 private:
  std::string data_file_, fingerprint_;
};

}  // namespace dpmu::cli
