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
#include "dpmu/core/dp_f_test.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/core/test_of_tests.hpp"

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
  /// subsample-aggregate (PB §4, the default) | test-of-tests (Kazan et al. 2023) | dp-f (Alabi & Vadhan
  /// 2022); docs/methods.md §11.
  std::string method = "subsample-aggregate";
  std::vector<double> bounds;         ///< dp-f: public clipping bounds L,U (one pair, or one per column)
  std::optional<double> alpha0;       ///< test-of-tests: subsample level α0 (with groups = m; else the rule)
  double power_target = 0.9;          ///< test-of-tests: target power ρ of the authors' tuning rule
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

/// The checks of --method and its options that need no data: a known method, a private method with
/// --epsilon, --bounds only for dp-f, --alpha0 only for test-of-tests.
/// @throws std::invalid_argument naming the option.
void check_test_method_options(const TestRequest& request);

/// The public settings of `dpmu test --method test-of-tests` for n rows, p tested and p0 H0 columns (with
/// the intercept): m and α0 given (groups, alpha0) or by the authors' rule (docs/methods.md §11.1); the
/// rule's choice is described in `tuning` if given. Checked before any data are touched.
/// @throws std::invalid_argument / std::domain_error naming the option.
core::TestOfTestsSettings test_of_tests_settings(const TestRequest& request, std::size_t n, int p, int p0,
                                                 nlohmann::ordered_json* tuning = nullptr);

/// The public settings of `dpmu test --method dp-f` (ρ from (ε, δ), bounds; docs/methods.md §11.2).
/// @throws std::invalid_argument / std::domain_error naming the option.
core::DpFTestSettings dp_f_test_settings(const TestRequest& request, std::size_t n, int p, int p0);

/// K = ⌈10/α⌉ for the smallest requested α (Alabi & Vadhan's choice).
std::size_t dp_f_null_simulations(const TestRequest& request);

/// The release of test(..) for --method test-of-tests (common with the intercept column; `analysed` and
/// its names are what the ledger fingerprints when data_bytes is empty). Internal to test().
nlohmann::ordered_json test_of_tests(const Eigen::MatrixXd& common, const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                     const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::MatrixXd& analysed,
                                     const std::vector<std::string>& analysed_names,
                                     const std::vector<std::string>& common_names,
                                     const std::vector<std::string>& tested_names, const std::string& response,
                                     const TestRequest& request, std::string_view data_bytes);

/// The release of test(..) for --method dp-f (rows: common without the intercept, tested, response).
/// Internal to test().
nlohmann::ordered_json dp_f_test(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::MatrixXd& analysed,
                                 const std::vector<std::string>& analysed_names,
                                 const std::vector<std::string>& common_names,
                                 const std::vector<std::string>& tested_names, const std::string& response,
                                 const TestRequest& request, std::string_view data_bytes);

/// The smallest ε the releases accept: a smaller one adds noise more than 10^12 times the
/// sensitivity (nothing of the data survives) and is beyond what the exact samplers can draw.
inline constexpr double kMinimumEpsilon = 1e-12;

/// Require a finite ε ≥ kMinimumEpsilon. @throws std::domain_error naming `option`.
void check_epsilon_floor(const char* command, const char* option, double epsilon);

}  // namespace dpmu::api
