#pragma once
/// @file release.hpp
/// The release layer: one type per method family that turns confidential data into a
/// differentially private release, and derives its own privacy guarantee from its own
/// sensitivity and noise (docs/privacy.md has the proofs and the audit results).
///
///  * SubsampleAggregateRelease — DP tests of nested linear models by subsample and aggregate
///    (Peña & Barrientos 2024, JMLR 25, §4, Eqs. 1–2).
///  * SspRelease — sufficient-statistic perturbation of the centred Gram matrix (PB §5: Laplace and
///    Wishart); thresholding, ridge and the §5.1 confidence sets are post-processing of its output.
///  * LcssfRelease — model selection of Lei et al. (2018), Algorithms 1 and 2 (docs/lcssf.md).
///
/// Every release takes a NoiseSource: the secure one (a cryptographically secure generator; exact
/// discrete samplers on a grid where we have them) for real releases, or a seeded simulation
/// stream for experiments and tests. There is no zero-noise path. Released values and diagnostic
/// values are different types: diagnostics (the confidential statistic, clamp counts, subsets that
/// could not be fitted) are filled only when the noise source is a simulation stream, so a real
/// release cannot print them.
///
/// Neighbouring relation everywhere: data sets with the same public number of rows n that differ
/// in one row (replace one row). Pure: no I/O, no threads.

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpmu/core/censoring.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/mechanisms.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"

namespace dpmu::core {

/// Where the randomness of a release comes from. Models UniformRandomBitGenerator (64-bit words),
/// so every sampler of the core accepts it.
class NoiseSource {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }

  /// A real release: `bits` must be a cryptographically secure generator (runtime::SecureRng).
  /// Releases then use their exact discrete samplers where they have one.
  static NoiseSource secure(std::function<std::uint64_t()> bits);
  /// A reproducible simulation (experiments, tests, audits): draws from `stream`, which the caller
  /// owns and which must outlive the source. Outputs made with it are not private.
  static NoiseSource simulation(RngStream& stream);

  /// True for the secure source.
  bool is_secure() const { return stream_ == nullptr; }
  result_type operator()() { return stream_ ? (*stream_)() : bits_(); }

 private:
  NoiseSource() = default;
  std::function<std::uint64_t()> bits_;
  RngStream* stream_ = nullptr;
};

/// The guarantee of a release, derived by the release type from its sensitivity and noise.
struct PrivacyGuarantee {
  double epsilon = 0.0;
  double delta = 0.0;
  std::string neighbouring;      ///< the neighbouring relation
  std::string mechanism;         ///< what noise is added to what
  std::string sensitivity_name;  ///< "l1_sensitivity", "l2_sensitivity" or "wishart_row_norm_squared"
  double sensitivity = 0.0;
  std::string sampler;  ///< how the noise is drawn in a real release (and whether it is hardened)
  /// The noise family, for the ledger's accountants (docs/privacy.md, "Accountants"): "laplace"
  /// (ε-DP), "gaussian" (analytic Gaussian: accounted as μ-GDP with μ = sensitivity/noise_scale),
  /// "wishart", "report-noisy-min" (ε-DP), "laplace+exponential"; empty: not recorded (the ledger
  /// then uses basic composition for the release).
  std::string noise_kind;
  /// Laplace: the scale b = Δ1/ε. Gaussian: the analytic-Gaussian σ for (ε, δ) and `sensitivity`
  /// (Balle & Wang 2018), so sensitivity/noise_scale is the μ of an exactly calibrated Gaussian;
  /// the noise a release adds is never smaller relative to its sensitivity (a larger printed σ, or
  /// the secure sampler's grid: σ√s·g ≥ σ(Δ_int·g)). 0: no single scale (Wishart, selection).
  double noise_scale = 0.0;
};

// ------------------------------------------------------------------------------------------------
// Subsample and aggregate (PB §4)
// ------------------------------------------------------------------------------------------------

/// Public settings of a DP test (all validated by the constructor of SubsampleAggregateRelease).
struct SubsampleAggregateSettings {
  Prior prior;                   ///< statistic: log B10, log I10 or 2 log Λ (PB Eqs. 3–4)
  double epsilon = 1.0;          ///< > 0
  double delta = 0.0;            ///< [0, 1): 0 = Laplace, > 0 = analytic Gaussian
  std::size_t num_subsets = 1;   ///< M
  CensoringLimits limits{0, 1};  ///< [L, U] on the statistic's log scale
  GaussianCalibration calibration = GaussianCalibration::exact;
  std::size_t n = 0;  ///< rows (public)
  int p = 1;          ///< tested predictors
  int p0 = 1;         ///< common columns, intercept counted
};

/// Confidential by-products of a test release; only ever filled in simulation mode.
struct SubsampleAggregateDiagnostics {
  double mean_censored = 0.0;             ///< (1/M) Σ (T_i ∨ L) ∧ U
  std::vector<double> subset_statistics;  ///< T_i (failed subsets hold failure_value())
  std::size_t failed_subsets = 0;         ///< subsets whose statistic could not be computed
};

/// One test release.
struct SubsampleAggregateOutput {
  double noisy_statistic = 0.0;     ///< T̃ = mean + noise (released; the §4.2 interval is built on it)
  double released_statistic = 0.0;  ///< T* = (T̃ ∨ L) ∧ U (released)
  std::string sampler;              ///< how the noise was drawn
  double grid = 0.0;                ///< secure sampler's grid (0 in simulation)
  std::optional<SubsampleAggregateDiagnostics> diagnostics;  ///< simulation mode only
};

/// DP test by subsample and aggregate (PB §4, Eqs. 1–2).
///
/// Sensitivity (replace one row, n public): the partition into M subsets is drawn independently of
/// the data, and a row lies in exactly one subset, so one row changes one T_i. After censoring each
/// T_i lies in [L, U], so the average changes by at most (U − L)/M (L1 = L2 sensitivity). A subset
/// whose statistic cannot be computed (rank-deficient design, constant response, exact fit)
/// contributes the public value failure_value() ∈ [L, U] instead of stopping the release, so the
/// bound still holds and whether a release exists does not depend on the data.
class SubsampleAggregateRelease {
 public:
  /// @throws std::domain_error for invalid ε, δ, limits, or an M for which some subset would have
  ///   b_i ≤ p + p0 + 1 rows (check_num_subsets).
  explicit SubsampleAggregateRelease(SubsampleAggregateSettings settings);

  const SubsampleAggregateSettings& settings() const { return settings_; }
  const ScalarMechanism& mechanism() const { return mechanism_; }
  /// (ε, δ) from the mechanism's calibration to the sensitivity (U − L)/M.
  PrivacyGuarantee privacy() const;
  /// The public statistic of a subset that cannot be fitted: the statistic at R² = 0 for a subset of
  /// the smallest size (⌊n/M⌋ rows), censored to [L, U] — "this subset shows no evidence for H1"
  /// (docs/decisions.md). Deterministic.
  double failure_value() const;

  /// Real data: a uniform random balanced partition (drawn from `noise`), T_i on each subset
  /// (re-fitted within the subset), censor, average, noise, censor.
  /// @param common n×p0 (intercept column included), tested n×p, response n. A non-finite value
  ///   makes its subset fail (the public failure_value()), never an error.
  /// @throws std::invalid_argument for a shape mismatch with the settings.
  SubsampleAggregateOutput release(const Eigen::Ref<const Eigen::MatrixXd>& common,
                                   const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                   const Eigen::Ref<const Eigen::VectorXd>& response, NoiseSource& noise) const;
  /// The aggregation step on statistics computed elsewhere (simulated studies); the same code path.
  /// NaN statistics count as failed subsets. @throws std::invalid_argument unless M statistics.
  SubsampleAggregateOutput release_statistics(std::span<const double> subset_statistics, NoiseSource& noise) const;

 private:
  SubsampleAggregateSettings settings_;
  ScalarMechanism mechanism_;
};

// ------------------------------------------------------------------------------------------------
// Sufficient-statistic perturbation (PB §5)
// ------------------------------------------------------------------------------------------------

/// Public bounds on the raw values of one column.
struct ColumnBounds {
  double lower = 0.0;
  double upper = 1.0;
};

/// Public settings of an SSP release.
struct SspReleaseSettings {
  SspMechanismKind mechanism = SspMechanismKind::laplace;
  /// p + 1 bounds on the raw values (predictors in order, response last); or one pair for all.
  std::vector<ColumnBounds> bounds;
  double epsilon = 1.0;  ///< > 0 (Wishart: < 1)
  double delta = 0.0;    ///< Wishart: (0, 1); Laplace: 0
  std::size_t n = 0;     ///< rows (public), > p + 1
  int p = 1;             ///< predictors
  /// Divide each column by its public width u_j − l_j before centring (noise proportional to each
  /// column's range). Uses public bounds only.
  bool rescale = false;
};

/// Confidential by-products of an SSP release; only ever filled in simulation mode.
struct SspDiagnostics {
  Eigen::MatrixXd gram;               ///< G of the clamped, centred data
  std::uint64_t clamped_entries = 0;  ///< raw entries moved into their bounds
};

/// One SSP release.
struct SspOutput {
  Eigen::MatrixXd released_gram;  ///< G* = G + E, (p+1)×(p+1) symmetric, in analysis units
  std::string sampler;
  std::optional<SspDiagnostics> diagnostics;  ///< simulation mode only
};

/// DP release of the centred Gram matrix G = Σ_i (x_i − x̄)(x_i − x̄)' of the rows x_i = (v_i, y_i)
/// (PB §5), with every raw value first clamped into its public bounds [l_j, u_j], then (optionally)
/// divided by w_j = u_j − l_j, then centred by the sample mean of the clamped rows.
///
/// Sensitivity (replace one row; n public). Let S be the centred scatter of n rows. For any row k,
/// S = S_{−k} + ((n−1)/n) v v' with v = x_k − m_{−k}, where S_{−k} and m_{−k} are the scatter and the
/// mean of the other n − 1 rows (the update formula of Chan, Golub & LeVeque 1983). Replacing x_k by
/// x̃_k changes S by ((n−1)/n)(ṽṽ' − vv'), with both v and ṽ in the box Π_j [−α_j, w_j − α_j],
/// α_j = m_j − l_j ∈ [0, w_j] (side j has width w_j and contains 0). For one pair (j, j') both
/// products v_j v_j' and ṽ_j ṽ_j' lie in the range of xy over that rectangle, whose length is at
/// most max(αβ, (w−α)(w'−β)) + max(α(w'−β), (w−α)β) ≤ w_j w_j' (each of the four sums is αw', wβ,
/// w(w'−β) or (w−α)w'). Hence |ΔS_jj'| ≤ ((n−1)/n) w_j w_j' for every j ≥ j', and over the
/// (p+1)(p+2)/2 unique entries
///     Δ1 = ((n−1)/n) Σ_{j ≥ j'} w_j w_j' = ((n−1)/n) ((Σ_j w_j)² + Σ_j w_j²)/2
/// (with rescale, w_j = 1: ((n−1)/n)(p+1)(p+2)/2). The bound is attained: all other rows at the
/// lower corner, x_k = l, x̃_k = u (tested by brute force in tests/core/release_test.cpp).
/// In floating point the values are shifted by the public lower bound (into [0, w_j]) before
/// centring, and a conservative bound on the rounding error of the accumulation is added to Δ1
/// (rounding_allowance(); relative size 8(min(b, n) + n/b + 4)·n·2^-53: 9e-10 at n = 1000,
/// 6e-5 at n = 10^7).
/// The Wishart guarantee does not account for rounding (its sampler is floating point anyway).
/// The same box gives ‖v‖² ≤ Σ_j w_j², so the Wishart mechanism (Sheffet 2019, Alg. 2) runs with
/// B² = ((n−1)/n) Σ_j w_j². Clamping before centring is what makes both bounds hold for every raw
/// row, however far outside the box; centring first (the paper's reading) does not (docs/privacy.md).
class SspRelease {
 public:
  /// @throws std::domain_error / std::invalid_argument for invalid settings (names the field):
  ///   bounds count not 1 or p + 1, l_j ≥ u_j or non-finite, ε, δ out of range, n ≤ p + 1.
  explicit SspRelease(SspReleaseSettings settings);

  const SspReleaseSettings& settings() const { return settings_; }
  int p() const { return settings_.p; }
  /// Divisor of each column (w_j with rescale, else 1); length p + 1.
  const Eigen::VectorXd& column_scale() const { return scale_; }
  /// Δ1 of the unique entries of G (see the class comment), rounding allowance included.
  double l1_sensitivity() const { return mechanism_.noise_l1_sensitivity.value(); }
  /// The part of l1_sensitivity() that covers floating-point rounding of the accumulation:
  /// 8·(min(b, n) + n/b + 4)·n·2^-53·Σ_{j≥j'} w_j w_j' with b = kGramBlock rows per block.
  double rounding_allowance() const { return rounding_allowance_; }
  /// Rows per accumulation block of confidential_gram.
  static constexpr std::size_t kGramBlock = 4096;
  /// The noise law of G* − G in analysis units, for post-processing (thresholds, ridge, §5.1 sets).
  const SspMechanism& mechanism() const { return mechanism_; }
  PrivacyGuarantee privacy() const;

  /// The confidential statistic: clamp, rescale, centre, Gram. Deterministic; for tests and audits.
  /// @param rows n×(p+1) raw rows, response last, finite. @param clamped_entries optional output.
  /// @throws std::invalid_argument for a shape mismatch; std::domain_error for a non-finite entry.
  Eigen::MatrixXd confidential_gram(const Eigen::Ref<const Eigen::MatrixXd>& rows,
                                    std::uint64_t* clamped_entries = nullptr) const;
  /// G* = G + E. Secure source: Laplace by exact discrete Laplace noise on a grid (the rounding is
  /// charged to the sensitivity); Wishart by a floating-point Bartlett draw (not hardened against
  /// floating-point attacks: privacy().sampler says so). Errors as confidential_gram.
  SspOutput release(const Eigen::Ref<const Eigen::MatrixXd>& rows, NoiseSource& noise) const;

 private:
  SspReleaseSettings settings_;
  Eigen::VectorXd lower_, upper_, scale_;
  double rounding_allowance_ = 0.0;
  SspMechanism mechanism_;
};

// ------------------------------------------------------------------------------------------------
// Model selection of Lei et al. (2018)
// ------------------------------------------------------------------------------------------------

/// Public settings of a model-selection release.
struct LcssfReleaseSettings {
  LcssfSettings lcssf;  ///< R, φ, data bound r (public), constants (docs/lcssf.md)
  int algorithm = 1;    ///< 1 (ε-DP) or 2 ((2ε, δ)-DP placeholder)
  double epsilon = 1.0;
  double delta = 0.0;  ///< Algorithm 2: (0, 1)
  std::size_t n = 0;   ///< rows (public)
  int d = 1;           ///< predictors (≤ 20)
};

/// Confidential by-products of a selection; simulation mode only.
struct LcssfDiagnostics {
  ModelMask non_private_minimiser = 0;
  std::size_t clamped_x_entries = 0;
  std::size_t clamped_y_entries = 0;
  std::size_t singular_models = 0;  ///< submodels whose design was singular (ridge τ used)
};

/// One selection release.
struct LcssfOutput {
  ModelMask selected = 0;  ///< released model
  /// Algorithm 2: the released variance ŝ (its own ε) and τ² = max(ŝ, floor) (post-processing).
  double released_variance = 0.0;
  double variance_truncation = 0.0;
  std::optional<LcssfDiagnostics> diagnostics;
};

/// DP model selection (Lei et al. 2018; docs/lcssf.md for the reconstruction). The data are clamped
/// into the public bound; S_M is the ℓ1-constrained RSS, whose sensitivity Δ_S follows from each
/// squared residual lying in [0, C] over the ℓ1 ball (rss_l1_sensitivity). A singular submodel is
/// handled without an error: S_M is then computed with the public ridge τ‖β‖² added to the
/// objective, τ = 1e-10 n b_x² (b_x the public bound on |X_ij|, so n b_x² bounds every Gram entry),
/// which moves S_M by at most τR² (charged to the sensitivity).
class LcssfRelease {
 public:
  /// @throws std::domain_error / std::invalid_argument for invalid settings (names the field).
  explicit LcssfRelease(LcssfReleaseSettings settings);
  const LcssfReleaseSettings& settings() const { return settings_; }
  /// Δ_S + τR² (see the class comment).
  double rss_l1_sensitivity() const;
  PrivacyGuarantee privacy() const;
  /// @param x n×d, y n (finite). Secure source: Algorithm 2's variance by exact discrete Laplace on
  ///   a grid; the selection steps draw floating-point noise from the CSPRNG and release only the
  ///   argmin / the sampled index. @throws std::invalid_argument for a shape mismatch.
  LcssfOutput release(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                      NoiseSource& noise) const;

 private:
  LcssfReleaseSettings settings_;
};

}  // namespace dpmu::core
