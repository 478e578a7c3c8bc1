#pragma once
/// @file test.hpp
/// The nested test H0: y ~ 1 + common against H1: y ~ 1 + common + tested (Peña & Barrientos 2024,
/// §3; the Bayes factor of Eq. 3 or an information criterion, Eq. 4), non-private or differentially
/// private by subsample and aggregate (§4, Eqs. 1–2): the one composition of core calls that the
/// `dpmu test` command and the R and Python packages make. Its result is the JSON object that
/// `dpmu test` prints (fields typed as settings, released values and diagnostics by
/// api::ReleaseReport; docs/privacy.md).

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/api/ledger.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"

namespace dpmu::api {

/// Largest `simulations` of a private test (the null simulation of the corrected critical values):
/// 10^8, as in R and Python.
inline constexpr std::size_t kMaxNullSimulations = 100000000;

/// Settings of test(). Spellings as `dpmu test --help`.
struct TestRequest {
  std::string prior = "g-prior";           ///< g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr
  std::optional<double> g;                 ///< fixed g of the g-prior (unset: n, or b_i per subset)
  double a = 3.0;                          ///< hyper-g / hyper-g-n parameter, > 2
  double prior_h0 = 0.5;                   ///< P(H0), in (0, 1)
  std::optional<double> epsilon;           ///< unset: the non-private test
  double delta = 0.0;                      ///< 0: Laplace; > 0: analytic Gaussian
  std::optional<std::size_t> groups;       ///< M, the number of subsets (private only)
  std::vector<double> censor;              ///< L, U on the statistic's log scale
  std::vector<double> censor_probability;  ///< or as posterior probabilities of H1
  std::vector<double> alpha{0.05, 0.01};   ///< levels of the intervals and critical values
  std::optional<std::uint64_t> seed;       ///< seeded simulation noise ("private": false)
  std::size_t simulations = 10000;         ///< null simulations for critical values (lr, bic, aic), 100 to 10^8
  std::string gaussian_calibration = "exact";
  LedgerOptions ledger;               ///< where a real release is charged (empty path: nowhere)
  std::string command = "dpmu test";  ///< the front end's name, for the ledger
  /// Reports of the null simulation (phase "null-simulation"), after the charge: the R and Python
  /// packages check for an interrupt there (it may throw; the release is then charged, not delivered).
  core::ProgressCallback progress;
};

/// A prior of the tests (PB Eqs. 3–4): its spelling, a fixed g (unset: the default) and a, checked.
/// @throws std::invalid_argument / std::domain_error naming the option.
core::Prior checked_prior(const std::string& kind, std::optional<double> g, double a);

/// The prior of a request, checked (and P(H0) in (0, 1)). @throws std::invalid_argument / std::domain_error.
core::Prior test_prior(const TestRequest& request);

/// The public settings of a private test for data of n rows, p tested and p0 H0 columns (with the
/// intercept), checked before any data are touched; `limits_source` says where the censoring
/// limits came from (the options, or the paper's §4.5 defaults).
/// @throws std::invalid_argument / std::domain_error naming the option.
core::SubsampleAggregateSettings test_release_settings(const TestRequest& request, std::size_t n, int p, int p0,
                                                       std::string& limits_source);

/// The release of a private test (test_release_settings, constructed): for `dpmu audit test`.
std::shared_ptr<const core::SubsampleAggregateRelease> make_test_release(const TestRequest& request, std::size_t n,
                                                                         int p, int p0);

/// The test of y on [1 common] against [1 common tested]: the JSON of `dpmu test`.
/// @param common n×k without the intercept (k may be 0), tested n×p (p ≥ 1), y length n; names
///   one per column. In a private test a non-finite value makes its subset fail (the public
///   failure value; the sensitivity is unchanged); a non-private test refuses it.
/// @param data_bytes the bytes the ledger fingerprints (the CLI: the data file as read); empty:
///   the analysed columns (matrix_bytes).
/// @throws std::invalid_argument / std::domain_error naming the input; runtime::BudgetExceeded.
nlohmann::ordered_json test(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested, const Eigen::Ref<const Eigen::VectorXd>& y,
                            const std::vector<std::string>& common_names, const std::vector<std::string>& tested_names,
                            const std::string& response, const TestRequest& request, std::string_view data_bytes = {});

/// The smallest ε the releases accept: a smaller one adds noise more than 10^12 times the
/// sensitivity (nothing of the data survives) and is beyond what the exact samplers can draw.
inline constexpr double kMinimumEpsilon = 1e-12;

/// Require a finite ε ≥ kMinimumEpsilon. @throws std::domain_error naming `option`.
void check_epsilon_floor(const char* command, const char* option, double epsilon);

}  // namespace dpmu::api
