#pragma once
/// @file data_options.hpp
/// Input options shared by the release commands (`dpmu test`, `bma`, `select`, their `dpmu audit`
/// twins, and `plan-test` for ε): `--sep`, registered next to `--data`, and the floor on ε.

#include <CLI/CLI.hpp>
#include <span>
#include <string>

#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

/// Register `--sep auto|,|;|tab` (default auto: comma, or ';' / tab when the header is one field
/// containing it; see runtime::CsvOptions) on `cmd`, storing the text in `sep`.
void add_separator_option(CLI::App* cmd, std::string& sep);

/// Read the columns `wanted` of the CSV file `path` with the separator option `sep`. When the
/// separator was detected (not a comma), say so on stderr ("<command>: note: ..."): the header is
/// public, so this is no disclosure. @throws as runtime::read_csv and runtime::parse_csv_separator.
runtime::DataTable read_data_file(const char* command, const std::string& path, std::span<const std::string> wanted,
                                  const std::string& sep);

/// The smallest --epsilon the commands accept. A smaller ε adds noise more than 10^12 times the
/// sensitivity (nothing of the data survives) and is beyond what the exact samplers can draw (their
/// noise is an integer count of grid steps below 2^62); ε = 1e-320 used to end in "log_statistic is
/// -nan" or "laplace scale in grid units is inf".
inline constexpr double kMinimumEpsilon = 1e-12;

/// Require a finite ε ≥ kMinimumEpsilon (after the command's own ε > 0 check).
/// @throws std::domain_error "<command>: <option> is E, but must be at least 1e-12 (...)".
void check_epsilon_floor(const char* command, const char* option, double epsilon);

}  // namespace dpmu::cli
