#pragma once
/// @file data_options.hpp
/// Input options shared by the release commands (`dpmu test`, `bma`, `select` and their `dpmu audit`
/// twins): `--sep`, registered next to `--data`, reading the data file once, and the ledger options.

#include <CLI/CLI.hpp>
#include <span>
#include <string>

#include "dpmu/api/ledger.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

/// Register `--sep auto|,|;|tab` (default auto: comma, or ';' / tab when the header is one field
/// containing it; see runtime::CsvOptions) on `cmd`, storing the text in `sep`.
void add_separator_option(CLI::App* cmd, std::string& sep);

/// A data file read once: its bytes (what a ledger fingerprints) and the table parsed from them.
struct DataFile {
  std::string bytes;
  runtime::DataTable table;
};

/// Read the CSV file `path` once and parse the columns `wanted` from those bytes, with the
/// separator option `sep`. When the separator was detected (not a comma), say so on stderr
/// ("<command>: note: ..."): the header is public, so this is no disclosure.
/// @throws as runtime::read_csv and runtime::parse_csv_separator.
DataFile read_data_file(const char* command, const std::string& path, std::span<const std::string> wanted,
                        const std::string& sep);

/// Add --ledger FILE and --budget EPS[,DELTA] (a privacy-budget ledger; api/ledger.hpp) to a release command.
void add_ledger_options(CLI::App* cmd, api::LedgerOptions& options);

/// The default ledger of a real release: the environment variable DPMU_LEDGER (made absolute), when
/// --ledger is not given and the variable is set and not empty; the packages use the same variable
/// (R also options(dpmu.ledger)). Seeded and non-private runs are not releases and get no default.
void default_ledger_from_environment(api::LedgerOptions& options, bool release);

using api::check_epsilon_floor;

}  // namespace dpmu::cli
