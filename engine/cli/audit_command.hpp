#pragma once
/// @file audit_command.hpp
/// `dpmu audit test|bma|select [the command's options]`: an empirical privacy audit of a release
/// path (docs/privacy.md). Each release command describes itself as an AuditTarget; the auditor
/// builds neighbouring data sets adversarially from the declared bounds, draws releases on both
/// through the real release code (its secure path, fed by a seeded stream so the audit is
/// reproducible), and reports a lower bound on ε
/// (core::audit_releases) next to the claimed ε.

#include <CLI/CLI.hpp>
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dpmu/core/audit.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::cli {

/// A release path as the auditor sees it.
struct AuditTarget {
  std::string command;               ///< "dpmu bma", ...
  core::PrivacyGuarantee guarantee;  ///< the claim
  core::AuditScore score = core::AuditScore::laplace_likelihood_ratio;
  Eigen::MatrixXd data;  ///< the confidential rows, the columns the release reads
  std::vector<std::string> columns;
  std::vector<core::ColumnBounds> bounds;  ///< per column: declared bounds, or the data's range
  std::string bounds_source;
  /// One release of `rows` (same shape as data) as a vector, drawn from `noise`.
  std::function<Eigen::VectorXd(const Eigen::MatrixXd& rows, core::NoiseSource& noise)> release;
};

/// Largest --audit-samples and --audit-pilot: 10^8 releases per data set.
inline constexpr std::size_t kMaxAuditSamples = 100000000;

/// Options of the auditor itself (the release options are the command's own).
struct AuditCliOptions {
  std::size_t samples = 2000;  ///< releases per data set
  std::uint64_t seed = 1;
  int events = 50;  ///< candidate thresholds
  double confidence = 0.95;
  std::size_t pilot = 40;  ///< releases per candidate neighbour when choosing the neighbour
};

/// Add --audit-samples, --audit-seed, --audit-events, --audit-confidence, --audit-pilot.
void add_audit_options(CLI::App* cmd, AuditCliOptions& options);

/// Run the audit and print its JSON report. @throws CLI::RuntimeError(1) when the lower bound
/// exceeds the claimed ε (the claim is refuted), std::invalid_argument for bad options.
void run_audit(const AuditTarget& target, const AuditCliOptions& options);

}  // namespace dpmu::cli
