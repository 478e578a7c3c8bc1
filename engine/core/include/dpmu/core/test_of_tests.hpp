#pragma once
/// @file test_of_tests.hpp
/// The Test of Tests (Kazan, Shi, Groce & Bray 2023, "The test of tests: a framework for
/// differentially private hypothesis testing", ICML; docs/methods.md "Test of Tests") around the
/// partial F-test of nested normal linear models: split the n rows at random into m disjoint
/// subsamples, run the public test on each, count the p-values ≤ α0, release the count plus Tulap
/// noise and the DP-UMP p-value of H0: θ ≤ α0 (Awan & Slavković 2018; tulap.hpp). Pure ε-DP.
/// m and α0 are chosen by the authors' rule (their `practical.m.alpha0`): the m (on their default
/// grid) and α0 (by golden-section search) that maximise the power at the smallest effect size of a
/// grid for which a power ≥ ρ is reachable. The tuning uses only public quantities (n, ε, α, the
/// model dimensions), never the data.
///
/// Neighbouring relation: data sets with the same public number of rows n that differ in one row.
/// Pure: no I/O, no threads.

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpmu/core/release.hpp"

namespace dpmu::core {

/// The classical partial F-test of H0: y ~ common against H1: y ~ common + tested.
struct PartialFTest {
  double f = 0.0;          ///< ((SSE0 − SSE1)/q) / (SSE1/(n − p0 − q))
  double df1 = 0.0;        ///< q
  double df2 = 0.0;        ///< n − p0 − q
  double r_squared = 0.0;  ///< 1 − SSE1/SSE0
  double p_value = 1.0;    ///< P(F_{q, n−p0−q} ≥ f) = I_{1−R²}(df2/2, q/2)
};

/// The partial F-test by fit_nested_models (one QR). `common` includes the intercept column if any
/// (it may have 0 columns: then the one-sample t-test is the case tested = a column of ones, with
/// f = t²). @throws std::invalid_argument as fit_nested_models (rank deficiency, constant response,
/// exact fit, n ≤ p0 + q).
PartialFTest partial_f_test(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                            const Eigen::Ref<const Eigen::VectorXd>& response);

/// Power of the level-alpha partial F-test with n rows at Cohen's effect size f (noncentrality
/// λ = n f²): P(F'_{q, n−p0−q}(λ) > F_{q, n−p0−q; 1−α}). For p0 = 0, q = 1 this is the power of the
/// two-sided one-sample t-test at standardised effect δ = f (R's power.t.test(..., strict = TRUE)).
/// @throws std::domain_error unless n > p0 + q, q ≥ 1, p0 ≥ 0, alpha ∈ (0, 1), f ≥ 0 finite.
double partial_f_test_power(double effect, std::size_t n, int p0, int q, double alpha);

/// Power of the public test on one subsample: (effect size, rows, level α0) ↦ power. Return a
/// non-finite value or 0 where the test cannot be run (the rule then uses α0, as the authors do).
using PublicTestPower = std::function<double(double effect, std::size_t rows, double alpha0)>;

/// The Test of Tests' power at a known effect (the authors' `power.test.of.tests`): the subsample
/// powers θ_i at balanced sizes (subset_sizes(n, m)), the Poisson-binomial law of the count, and
/// P(count + N ≥ z_α) with z_α the DP-UMP critical value at θ0 = α0. Deterministic.
/// @throws std::domain_error for m ∉ [1, n], α0 or α ∉ (0, 1), ε ≤ 0.
double test_of_tests_power(double effect, const PublicTestPower& public_power, double epsilon, std::size_t n,
                           std::size_t m, double alpha0, double alpha);

/// A choice of (m, α0) with the power it gives at `effect`.
struct TestOfTestsTuning {
  double power = 0.0;
  double alpha0 = 0.0;
  std::size_t m = 1;
  double effect = 0.0;  ///< the effect size the choice was optimised for
};

/// The authors' default grid of m: 1, …, ⌊√n⌋ and ⌊n/k⌋ for k = ⌊√n + 1⌋, …, 1, without duplicates,
/// then only those with ⌊n/m⌋ ≥ min_rows (each subsample can run the test).
std::vector<std::size_t> test_of_tests_m_grid(std::size_t n, std::size_t min_rows);

/// For each m of the grid, the α0 ∈ (0, 1) that maximises the power (golden-section search to
/// 5e-3, as R's optimize in the authors' `optimal.m.alpha0`); returns the best (first on ties).
/// @throws std::invalid_argument for an empty grid.
TestOfTestsTuning optimal_m_alpha0(double effect, const PublicTestPower& public_power, double epsilon, std::size_t n,
                                   std::span<const std::size_t> m_grid, double alpha);

/// The authors' practical rule (`practical.m.alpha0`): a binary search over the increasing
/// `effect_grid` for the smallest effect at which optimal_m_alpha0 reaches power ≥ rho, and the
/// (m, α0) chosen there. If no effect of the grid reaches rho, the (m, α0) of the largest effect.
/// @throws std::invalid_argument for an empty grid, std::domain_error for rho ∉ (0, 1).
TestOfTestsTuning practical_m_alpha0(double rho, const PublicTestPower& public_power, double epsilon, std::size_t n,
                                     std::span<const std::size_t> m_grid, std::span<const double> effect_grid,
                                     double alpha);

/// Public settings of a Test-of-Tests release around the partial F-test.
struct TestOfTestsSettings {
  double epsilon = 1.0;         ///< requested ε (the release uses tulap_dyadic_epsilon(ε) ≤ ε)
  std::size_t n = 0;            ///< rows (public)
  std::size_t num_subsets = 1;  ///< m
  double alpha0 = 0.05;         ///< the subsample level α0 ∈ (0, 1)
  int p0 = 1;                   ///< common columns, intercept counted (0 allowed: no intercept)
  int q = 1;                    ///< tested columns
};

/// Confidential by-products; simulation mode only.
struct TestOfTestsDiagnostics {
  std::uint64_t count = 0;              ///< subsample p-values ≤ α0
  std::vector<double> subset_p_values;  ///< per subsample (failed: the uniform draw used)
  std::size_t failed_subsets = 0;       ///< subsamples where the F-test could not be computed
};

/// One release.
struct TestOfTestsOutput {
  double noisy_count = 0.0;  ///< Z = count + Tulap noise (released)
  double p_value = 1.0;      ///< DP-UMP p-value of H0: θ ≤ α0 (post-processing of Z)
  std::optional<TestOfTestsDiagnostics> diagnostics;
};

/// The Test of Tests release. Sensitivity: the partition is drawn independently of the data and a
/// row lies in exactly one subsample, so replacing it changes at most one subsample's indicator
/// 1{p_i ≤ α0}: the count changes by at most 1. A subsample whose test cannot be computed draws its
/// p-value from U(0, 1) (as the authors' implementation), still a {0, 1} indicator. The Tulap noise
/// at ε' ≤ ε makes Z ε'-DP (tulap.hpp); the p-value is post-processing.
class TestOfTestsRelease {
 public:
  /// @throws std::domain_error for ε outside [1e-12, 1000], α0 ∉ (0, 1), m ∉ [1, n], or subsamples
  ///   too small for the test (⌊n/m⌋ ≤ p0 + q).
  explicit TestOfTestsRelease(TestOfTestsSettings settings);
  const TestOfTestsSettings& settings() const { return settings_; }
  /// ε' = tulap_dyadic_epsilon(ε), the parameter of the noise actually drawn.
  double epsilon_used() const { return epsilon_used_; }
  PrivacyGuarantee privacy() const;

  /// Partition (from `noise`), the F-test on each subsample (common includes the intercept column),
  /// count, Tulap noise, p-value. @throws std::invalid_argument for shape mismatches.
  TestOfTestsOutput release(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                            const Eigen::Ref<const Eigen::VectorXd>& response, NoiseSource& noise) const;
  /// The count-and-noise step on subsample p-values computed elsewhere (NaN: a failed subsample, which
  /// draws U(0, 1)); the same code path. @throws std::invalid_argument unless m p-values.
  TestOfTestsOutput release_p_values(std::span<const double> p_values, NoiseSource& noise) const;

 private:
  TestOfTestsSettings settings_;
  double epsilon_used_ = 0.0;
};

}  // namespace dpmu::core
