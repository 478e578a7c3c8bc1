#pragma once
/// @file subsample_and_aggregate.hpp
/// Differentially private tests of nested linear models by subsample and aggregate
/// (Peña & Barrientos 2024, §4 Eqs. 1–2, §4.2 intervals, §4.3 corrected critical values,
/// §4.5 guidelines; docs/methods.md §4). Every statistic is on a log scale: log B10 (Bayesian
/// priors), log I10 (bic, aic) or 2 log Λ10 (lr; docs/methods.md A5).

#include <Eigen/Dense>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/censoring.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/mechanisms.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"

namespace dpmu::core {

/// The scale of the statistic that subsample and aggregate censors and averages.
enum class StatisticScale { log_bayes_factor, log_information_criterion, two_log_likelihood_ratio };

/// log_bayes_factor for priors on g, log_information_criterion for bic/aic, two_log_likelihood_ratio for lr.
StatisticScale statistic_scale(PriorKind kind);
/// "log_bayes_factor", "log_information_criterion" or "two_log_likelihood_ratio".
std::string to_string(StatisticScale scale);

/// Subset sizes b_1..b_M of a balanced partition: ⌈n/M⌉ for the first n mod M subsets, ⌊n/M⌋ after
/// (docs/methods.md A17). @throws std::domain_error for M = 0 or M > n.
std::vector<std::size_t> subset_sizes(std::size_t n, std::size_t num_subsets);

/// Largest M for which every subset has b_i > p + p0 + 1 rows (0 if none).
std::size_t largest_admissible_num_subsets(std::size_t n, int p, int p0);

/// Require every subset of a balanced partition into M to have b_i > p + p0 + 1.
/// @throws std::domain_error naming the largest admissible M.
void check_num_subsets(std::size_t n, std::size_t num_subsets, int p, int p0);

/// Random balanced partition of rows 0..n−1 into M subsets with sizes subset_sizes(n, M): a uniform
/// random permutation (Fisher–Yates) cut into consecutive blocks. Draws from rng.
/// @throws std::domain_error as subset_sizes.
std::vector<std::vector<std::size_t>> random_partition(std::size_t n, std::size_t num_subsets, RngStream& rng);

/// The statistic T_i of one subset with b rows (paper Eqs. 1–2 per subset, docs/methods.md §4.1 step 2):
/// log B10 with the prior's scale set to b (g-prior: g_i = b unless g is fixed; ZS rate b/2; …),
/// log I10 = −(b/2) log(1−R²) − (ρ/2) log b, or 2 log Λ = −b log(1−R²) for lr. Natural logs.
/// @throws as log_bayes_factor / log_information_criterion.
double subset_statistic(const Prior& prior, double log_one_minus_r_squared, double b, int p, int p0);

/// T_i for every subset of `partition`, each fitted on its own rows (the intercept and common
/// coefficients are re-estimated within the subset, docs/methods.md A16).
/// @param common n×p0 (intercept column included), tested n×p, response n.
/// @param failure_value if set, a subset whose statistic cannot be computed (rank-deficient design,
///   constant response, exact fit: fit_nested_models or subset_statistic throws) gets this value
///   instead of an error (releases: SubsampleAggregateRelease::failure_value()).
/// @param failed_subsets if non-null, receives the number of such subsets.
/// @throws std::invalid_argument if a subset is rank-deficient and no failure_value is given (the
///   message names the subset), or as fit_nested_models.
std::vector<double> subset_statistics(const Eigen::Ref<const Eigen::MatrixXd>& common,
                                      const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                      const Eigen::Ref<const Eigen::VectorXd>& response,
                                      const std::vector<std::vector<std::size_t>>& partition, const Prior& prior,
                                      std::optional<double> failure_value = std::nullopt,
                                      std::size_t* failed_subsets = nullptr);

/// The mechanism of a subsample-and-aggregate release of the average of M statistics censored to
/// [L, U] (sensitivity Δ/M, Δ = U − L): Laplace(Δ/(Mε)) when δ = 0, else the analytic Gaussian with
/// the exact BW σ for Δ/M, or the paper's printed variance α²Δ²/(2Mε) (√M times that σ; docs/methods.md A2).
/// @throws std::domain_error for ε ≤ 0, δ ∉ [0, 1), M = 0 or invalid limits.
ScalarMechanism subsample_and_aggregate_mechanism(double epsilon, double delta, const CensoringLimits& limits,
                                                  std::size_t num_subsets,
                                                  GaussianCalibration calibration = GaussianCalibration::exact);

/// One release (paper Eqs. 1–2).
struct AggregateRelease {
  double mean_censored = 0.0;       ///< (1/M) Σ (T_i ∨ L) ∧ U, confidential
  double noise = 0.0;               ///< η
  double noisy_statistic = 0.0;     ///< T̃ = mean_censored + η (DP; the §4.2 interval is built on it)
  double released_statistic = 0.0;  ///< T* = (T̃ ∨ L) ∧ U (DP)
};

/// (1/M) Σ (T_i ∨ L) ∧ U, the confidential average of the censored statistics (paper Eq. 1).
/// @throws std::invalid_argument for an empty span or a NaN statistic.
double mean_censored(std::span<const double> subset_statistics, const CensoringLimits& limits);

/// Censor each T_i to [L, U], average, add one draw of the mechanism's noise, censor again.
/// Draws once from rng. @throws std::invalid_argument for an empty span, NaN statistics.
template <class Rng>
AggregateRelease aggregate_and_release(std::span<const double> subset_statistics, const CensoringLimits& limits,
                                       const ScalarMechanism& mechanism, Rng& rng);

/// Closed interval.
struct Interval {
  double lower;
  double upper;
};

/// Paper §4.2: C̃ = T̃ ± η_{1−α/2} = [T̃ − q, T̃ + q], q the 1 − α/2 quantile of the mechanism's noise
/// (Laplace: b log(1/α); Gaussian: σ Φ⁻¹(1 − α/2)). It covers the confidential mean of the censored
/// statistics (1/M) Σ T_i^c with probability exactly 1 − α, because T̃ − (1/M) Σ T_i^c = η is
/// continuous and symmetric. End points not censored. @throws std::domain_error for α ∉ (0, 1).
Interval noise_interval(double noisy_statistic, const ScalarMechanism& mechanism, double alpha);

/// Paper §4.2: noise_interval intersected with [L, U] (each end point censored), the interval a
/// release reports; since (1/M) Σ T_i^c lies in [L, U] it covers whenever noise_interval does.
/// @throws std::domain_error for α ∉ (0, 1).
Interval mechanism_uncertainty_interval(double noisy_statistic, const CensoringLimits& limits,
                                        const ScalarMechanism& mechanism, double alpha);

/// Default censoring limits of the paper's guidelines (§4.3, §4.5): for lr (2 log Λ scale) L = 0 and
/// U = 2 χ²_{p, 0.95} (≈ 7.68 for p = 1; the paper used 7); otherwise the limits equivalent to censoring
/// the posterior probability of H1 at [0.01, 0.99] given P(H0) (±log 99 when P(H0) = 1/2).
/// @throws std::domain_error for p < 1 (lr) or P(H0) outside (0, 1).
CensoringLimits default_censoring_limits(PriorKind kind, int p, double prior_probability_h0);

/// Simulated null distribution of T* (paper §4.3): R²_i ~ Beta(p/2, (b_i − p − p0)/2) independently,
/// T_i from subset_statistic, censor, average, add noise, censor.
struct NullDistribution {
  std::vector<double> sorted_statistics;  ///< T*_1 ≤ … ≤ T*_N
  double probability_at_upper = 0.0;      ///< fraction with T* = U (the atom; docs/methods.md A18)
};

/// Draw `num_simulations` null releases from rng (R² drawn as X/(X+Y) with gamma X, Y so that
/// log(1 − R²) = log Y − log(X + Y) is exact). Deterministic given rng. `progress` (phase
/// "null-simulation") is called every kProgressInterval simulations and may throw to stop it.
/// @throws std::domain_error for num_simulations < 1 or sizes with b_i ≤ p + p0.
NullDistribution simulate_null_distribution(const Prior& prior, std::span<const std::size_t> sizes, int p, int p0,
                                            const CensoringLimits& limits, const ScalarMechanism& mechanism,
                                            std::size_t num_simulations, RngStream& rng,
                                            const ProgressCallback& progress = {});

/// A critical value at level α with its Monte Carlo standard error.
struct CriticalValue {
  double significance_level;  ///< α
  double value;               ///< c_α = empirical 1 − α quantile (inverse ECDF, type 1); reject iff T* > c_α
  double mcse;          ///< half-width of the distribution-free 95% order-statistic interval of the quantile, / 1.96
  bool at_upper_limit;  ///< c_α = U: the non-randomized test cannot reject at this level
  /// Randomized test at the atom (exact level α): when c_α = U, reject with this probability if
  /// T* = U, i.e. α / P(T* = U); 0 when c_α < U (the law is continuous there).
  double randomization_probability;
};

/// Corrected critical value from a simulated null distribution (reject iff T* > c_α; at the atom
/// T* = U see CriticalValue::randomization_probability). @throws std::domain_error for α ∉ (0,1)
/// or an empty distribution.
CriticalValue corrected_critical_value(const NullDistribution& null, double alpha, const CensoringLimits& limits);

/// Probability of rejecting H0 given the released T* (paper §4.3 with the atom handled): 1 if
/// T* > c_α; the randomization probability if c_α = U and T* = U; else 0. Deterministic.
double rejection_probability(const CriticalValue& critical_value, double released_statistic,
                             const CensoringLimits& limits);

/// The uncorrected (non-private, asymptotic) critical value on the statistic's scale: χ²_{p,1−α} for lr
/// (2 log Λ), χ²_{p,1−α}/2 − mean_i (ρ_i/2) log b_i for bic/aic (log I). @throws std::invalid_argument
/// for Bayesian priors (no frequentist critical value).
double uncorrected_critical_value(PriorKind kind, std::span<const std::size_t> sizes, int p, double alpha);

// ---------------------------------------------------------------------------------------------
template <class Rng>
AggregateRelease aggregate_and_release(std::span<const double> subset_statistics, const CensoringLimits& limits,
                                       const ScalarMechanism& mechanism, Rng& rng) {
  AggregateRelease out;
  out.mean_censored = mean_censored(subset_statistics, limits);
  out.noise = mechanism.sample(rng);
  out.noisy_statistic = out.mean_censored + out.noise;
  out.released_statistic = censor(out.noisy_statistic, limits);
  return out;
}

}  // namespace dpmu::core

namespace dpmu::core {

/// One candidate setting for planning a private test (paper §4.5 guidelines).
struct TestPlanSetting {
  std::size_t num_subsets;  ///< M
  CensoringLimits limits;   ///< [L, U]
};

/// Simulated accuracy of the noisy aggregate T̃ for one setting, relative to the unsplit, uncensored
/// statistic 𝒯 on all n rows (docs/methods.md §4.4).
struct TestPlanResult {
  TestPlanSetting setting;
  double target = 0.0;                ///< 𝒯 at the given R², or E(𝒯) under H0
  double bias = 0.0;                  ///< E(T̃) − target
  double variance = 0.0;              ///< Var(T̃)
  double mse = 0.0;                   ///< bias² + variance
  double mse_mcse = 0.0;              ///< Monte Carlo SE of mse
  double released_mse = 0.0;          ///< the same for the released T* = (T̃ ∨ L) ∧ U
  double probability_at_upper = 0.0;  ///< P(T* = U)
};

/// Paper §4.5: simulate the bias, variance and MSE of T̃ for candidate (M, L, U).
/// Subset R²_i are drawn from their sampling law: under H0 (r_squared < 0) Beta(p/2, (b_i−p−p0)/2); at a
/// given full-data R² ≥ 0, from the noncentral law R²_i = X1/(X1+X2), X1 ~ χ²_p(λ_i), X2 ~ χ²_{b_i−p−p0},
/// λ_i = b_i θ with the plug-in θ = max(0, R²/(1−R²) − p/(n−p−p0)). The noise follows
/// subsample_and_aggregate_mechanism(ε, δ, limits, M, calibration). Draws from rng.
/// @throws std::domain_error for an inadmissible M (see check_num_subsets), invalid ε, δ, limits, or
/// r_squared ≥ 1; std::invalid_argument for an empty settings list or fewer than 10 simulations.
std::vector<TestPlanResult> plan_test(const Prior& prior, std::size_t n, int p, int p0, double epsilon, double delta,
                                      GaussianCalibration calibration, std::span<const TestPlanSetting> settings,
                                      double r_squared, std::size_t simulations, RngStream& rng);

}  // namespace dpmu::core
