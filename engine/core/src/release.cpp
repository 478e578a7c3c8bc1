#include "dpmu/core/release.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/secure_noise.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"

namespace dpmu::core {

namespace {
constexpr const char* kReplaceOne = "replace one row; the number of rows n is public";

std::string secure_sampler_label(const SecureNoiseSampler& s) {
  return "exact discrete Laplace on the grid " + format_value(s.grid()) +
         " (Canonne, Kamath & Steinke 2020), from the kernel CSPRNG";
}
}  // namespace

NoiseSource NoiseSource::secure(std::function<std::uint64_t()> bits) {
  if (!bits) throw_invalid("NoiseSource::secure", "no generator given");
  NoiseSource s;
  s.bits_ = std::move(bits);
  return s;
}

NoiseSource NoiseSource::simulation(RngStream& stream) {
  NoiseSource s;
  s.stream_ = &stream;
  return s;
}

// ------------------------------------------------------------------------------------------------
// Subsample and aggregate
// ------------------------------------------------------------------------------------------------

SubsampleAggregateRelease::SubsampleAggregateRelease(SubsampleAggregateSettings settings)
    : settings_(std::move(settings)),
      mechanism_(subsample_and_aggregate_mechanism(settings_.epsilon, settings_.delta, settings_.limits,
                                                   settings_.num_subsets, settings_.calibration)) {
  check_prior(settings_.prior);
  if (settings_.p < 1) throw_domain("SubsampleAggregateRelease", "p (tested predictors)", settings_.p, ">= 1");
  if (settings_.p0 < 1) throw_domain("SubsampleAggregateRelease", "p0 (intercept counted)", settings_.p0, ">= 1");
  check_num_subsets(settings_.n, settings_.num_subsets, settings_.p, settings_.p0);
}

PrivacyGuarantee SubsampleAggregateRelease::privacy() const {
  PrivacyGuarantee g;
  g.epsilon = mechanism_.epsilon();
  g.delta = mechanism_.delta();
  g.neighbouring = kReplaceOne;
  const bool laplace = mechanism_.kind() == ScalarMechanism::Kind::laplace;
  g.mechanism = std::string(laplace ? "Laplace" : "analytic Gaussian") +
                " noise on the average of M censored subset statistics (PB Sec. 4, Eqs. 1-2)";
  g.sensitivity_name = laplace ? "l1_sensitivity" : "l2_sensitivity";
  g.sensitivity = mechanism_.sensitivity();
  g.sampler = laplace ? "exact discrete Laplace on a grid from the kernel CSPRNG (Canonne, Kamath & Steinke 2020)"
                      : "exact discrete Gaussian on a grid from the kernel CSPRNG (Canonne, Kamath & Steinke 2020)";
  g.noise_kind = laplace ? "laplace" : "gaussian";
  // Gaussian: the exact σ for (ε, δ) even when a larger σ is used (paper-literal), since the secure
  // sampler's grid rounding may raise the sensitivity a little above g.sensitivity relative to it.
  g.noise_scale = laplace ? mechanism_.scale() : analytic_gaussian_sigma(g.epsilon, g.delta, g.sensitivity);
  return g;
}

double SubsampleAggregateRelease::failure_value() const {
  const double b = std::floor(static_cast<double>(settings_.n) / static_cast<double>(settings_.num_subsets));
  return censor(subset_statistic(settings_.prior, 0.0, b, settings_.p, settings_.p0), settings_.limits);
}

SubsampleAggregateOutput SubsampleAggregateRelease::release_statistics(std::span<const double> t,
                                                                       NoiseSource& noise) const {
  constexpr const char* fn = "SubsampleAggregateRelease::release_statistics";
  if (t.size() != settings_.num_subsets) {
    throw_invalid(fn, std::to_string(t.size()) + " statistics for M = " + std::to_string(settings_.num_subsets));
  }
  const double fail = failure_value();
  SubsampleAggregateDiagnostics diag;
  for (double v : t) {
    diag.failed_subsets += std::isnan(v) ? 1 : 0;
    diag.subset_statistics.push_back(std::isnan(v) ? fail : v);
  }
  diag.mean_censored = mean_censored(diag.subset_statistics, settings_.limits);
  SubsampleAggregateOutput out;
  if (noise.is_secure()) {
    const double bound = std::max(std::abs(settings_.limits.lower), std::abs(settings_.limits.upper));
    const SecureNoiseSampler sampler(mechanism_, 1, bound);
    const SecureNoise z = sampler.add(diag.mean_censored, noise);
    out.noisy_statistic = z.value;
    out.sampler = z.sampler + " (exact, on a grid) from the kernel CSPRNG";
    out.grid = z.grid;
  } else {
    out.noisy_statistic = diag.mean_censored + mechanism_.sample(noise);
    out.sampler = "simulation: continuous " + mechanism_.name() + " from a seeded Philox4x64-10 stream";
    out.diagnostics = std::move(diag);
  }
  out.released_statistic = censor(out.noisy_statistic, settings_.limits);
  return out;
}

SubsampleAggregateOutput SubsampleAggregateRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& common,
                                                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                                            const Eigen::Ref<const Eigen::VectorXd>& response,
                                                            NoiseSource& noise) const {
  constexpr const char* fn = "SubsampleAggregateRelease::release";
  const auto n = static_cast<Eigen::Index>(settings_.n);
  if (common.rows() != n || tested.rows() != n || response.size() != n || common.cols() != settings_.p0 ||
      tested.cols() != settings_.p) {
    throw_invalid(fn, "the data do not have the shape of the settings (n = " + std::to_string(n) +
                          ", p0 = " + std::to_string(settings_.p0) + ", p = " + std::to_string(settings_.p) + ")");
  }
  // A non-finite value (e.g. log(0) derived by a front end from a valid row) is not an error: the
  // subset holding its row cannot be fitted and contributes the public failure value, like any
  // other subset that cannot be fitted. A refusal would depend on the data; the failed subset keeps
  // the (U − L)/M sensitivity (one row changes one subset).
  // The partition is drawn from the release's own randomness, independently of the data.
  RngStream partition_rng(noise(), noise(), 0, StreamPurpose::data);
  const auto partition = random_partition(settings_.n, settings_.num_subsets, partition_rng);
  std::size_t failed = 0;
  const std::vector<double> t =
      subset_statistics(common, tested, response, partition, settings_.prior, failure_value(), &failed);
  SubsampleAggregateOutput out = release_statistics(t, noise);
  if (out.diagnostics) out.diagnostics->failed_subsets = failed;
  return out;
}

// ------------------------------------------------------------------------------------------------
// SSP
// ------------------------------------------------------------------------------------------------

SspRelease::SspRelease(SspReleaseSettings s) : settings_(std::move(s)) {
  constexpr const char* fn = "SspRelease";
  const int p = settings_.p;
  if (p < 1) throw_domain(fn, "p (predictors)", p, ">= 1");
  const auto d = static_cast<std::size_t>(p) + 1;
  if (settings_.bounds.size() == 1) settings_.bounds.assign(d, settings_.bounds.front());
  if (settings_.bounds.size() != d) {
    throw_invalid(fn, "bounds: " + std::to_string(settings_.bounds.size()) +
                          " pairs given; give one pair for every column or p + 1 = " + std::to_string(d) +
                          " pairs (predictors in order, response last)");
  }
  lower_.resize(static_cast<Eigen::Index>(d));
  upper_.resize(static_cast<Eigen::Index>(d));
  scale_ = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(d));
  for (std::size_t j = 0; j < d; ++j) {
    const auto [l, u] = settings_.bounds[j];
    const std::string name = "bounds of column " + std::to_string(j + 1);
    check_finite(fn, name + " (lower)", l);
    check_finite(fn, name + " (upper)", u);
    if (!(l < u)) throw_domain(fn, name + " (upper - lower)", u - l, "> 0 (lower < upper)");
    lower_(static_cast<Eigen::Index>(j)) = l;
    upper_(static_cast<Eigen::Index>(j)) = u;
    if (settings_.rescale) scale_(static_cast<Eigen::Index>(j)) = u - l;
  }
  if (!(static_cast<double>(settings_.n) > p + 1.0)) {
    throw_domain(fn, "n (rows)", static_cast<double>(settings_.n), "> p + 1 = " + std::to_string(p + 1));
  }
  check_positive_finite(fn, "epsilon", settings_.epsilon);
  visit_ssp_mechanism(settings_.mechanism, [&](auto unit) {
    decltype(unit)::type::check_release_privacy(fn, settings_.epsilon, settings_.delta);
  });
  // Widths in analysis units and the sensitivities of the class comment.
  const Eigen::VectorXd w = (upper_ - lower_).cwiseQuotient(scale_);
  const double nd = static_cast<double>(settings_.n);
  const double shrink = (nd - 1.0) / nd;
  mechanism_.kind = settings_.mechanism;
  mechanism_.p = p;
  mechanism_.epsilon = settings_.epsilon;
  mechanism_.delta = settings_.delta;
  const double sum_products = 0.5 * (w.sum() * w.sum() + w.squaredNorm());  // Σ_{j≥j'} w_j w_j'
  // Rounding: the accumulation (blocks of kGramBlock rows, merged in sequence) computes each entry
  // within about (b + n/b)·n·u·w_j w_j' of the exact value (u = 2^-53; first order, the mean's
  // error enters only at second order because the centred values sum to zero). Both neighbours may
  // be off, so 2·4·(b + n/b + 4)·n·u·Σ w_j w_j' is added (a factor 4 of slack).
  const double b = static_cast<double>(kGramBlock);
  rounding_allowance_ = 8.0 * (std::min(b, nd) + nd / b + 4.0) * nd * 0x1.0p-53 * sum_products;
  mechanism_.noise_l1_sensitivity = shrink * sum_products + rounding_allowance_;
  mechanism_.noise_row_norm_squared = shrink * w.squaredNorm();
  check_ssp_mechanism(mechanism_);
}

PrivacyGuarantee SspRelease::privacy() const {
  PrivacyGuarantee g;
  g.epsilon = settings_.epsilon;
  g.delta = settings_.delta;
  g.neighbouring = kReplaceOne;
  visit_ssp_mechanism(settings_.mechanism, [&](auto unit) {
    using Unit = typename decltype(unit)::type;
    g.mechanism = Unit::description;
    g.sensitivity_name = Unit::sensitivity_name;
    g.sensitivity = Unit::sensitivity(mechanism_);
    g.sampler = Unit::secure_sampler;
    g.noise_kind = Unit::name;
  });
  if (settings_.mechanism == SspMechanismKind::laplace) g.noise_scale = ssp_laplace_scale(mechanism_);
  return g;
}

Eigen::MatrixXd SspRelease::confidential_gram(const Eigen::Ref<const Eigen::MatrixXd>& rows,
                                              std::uint64_t* clamped_entries) const {
  constexpr const char* fn = "SspRelease";
  const Eigen::Index d = settings_.p + 1;
  if (rows.cols() != d || rows.rows() != static_cast<Eigen::Index>(settings_.n)) {
    throw_invalid(fn, "the data are " + std::to_string(rows.rows()) + "x" + std::to_string(rows.cols()) +
                          ", but the settings say n = " + std::to_string(settings_.n) +
                          " rows and p + 1 = " + std::to_string(d) + " columns");
  }
  if (!rows.allFinite()) throw_domain(fn, "an entry of the data", std::nan(""), "finite");
  std::uint64_t clamped = 0;
  constexpr double kHuge = std::numeric_limits<double>::max();
  GramAccumulator acc(static_cast<int>(d), -kHuge, kHuge, true);
  Eigen::MatrixXd block;
  const auto step = static_cast<Eigen::Index>(kGramBlock);
  for (Eigen::Index s = 0; s < rows.rows(); s += step) {
    block = rows.middleRows(s, std::min(step, rows.rows() - s));
    for (Eigen::Index j = 0; j < d; ++j) {
      const double width = (upper_(j) - lower_(j)) / scale_(j);
      for (Eigen::Index i = 0; i < block.rows(); ++i) {
        const double v = block(i, j);
        const double c = std::clamp(v, lower_(j), upper_(j));
        clamped += c != v ? 1 : 0;
        // Clamp raw values first, then shift by the public lower bound and rescale, clamping again
        // so that every value lies in [0, width] whatever the rounding (a large offset of the bounds
        // would otherwise cost digits in the centring); centring is the accumulator's.
        block(i, j) = std::clamp((c - lower_(j)) / scale_(j), 0.0, width);
      }
    }
    acc.add(block);
  }
  if (clamped_entries) *clamped_entries = clamped;
  return acc.gram_matrix();
}

SspOutput SspRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& rows, NoiseSource& noise) const {
  SspDiagnostics diag;
  diag.gram = confidential_gram(rows, &diag.clamped_entries);
  const Eigen::Index d = settings_.p + 1;
  SspOutput out;
  if (!noise.is_secure()) {
    out.released_gram = noisy_gram_matrix(diag.gram, mechanism_, noise);
    out.sampler = std::string("simulation: continuous ") + std::string(to_string(settings_.mechanism)) +
                  " noise from a seeded Philox4x64-10 stream";
    out.diagnostics = std::move(diag);
    return out;
  }
  out.released_gram.resize(d, d);
  const bool secure_discrete =
      visit_ssp_mechanism(settings_.mechanism, [](auto unit) { return decltype(unit)::type::exact_discrete_laplace; });
  if (secure_discrete) {
    // Exact discrete Laplace per unique entry. |G_jj'| ≤ n w_j w_j' ≤ n max_j w_j² bounds every
    // entry (centred values lie within a width).
    const Eigen::VectorXd w = (upper_ - lower_).cwiseQuotient(scale_);
    const double bound = static_cast<double>(settings_.n) * w.cwiseAbs2().maxCoeff();
    const SecureNoiseSampler sampler(ScalarMechanism::laplace(settings_.epsilon, l1_sensitivity()),
                                     static_cast<std::size_t>(d) * static_cast<std::size_t>(d + 1) / 2, bound);
    for (Eigen::Index j = 0; j < d; ++j) {
      for (Eigen::Index i = j; i < d; ++i) {
        out.released_gram(i, j) = sampler.add(diag.gram(i, j), noise).value;
        out.released_gram(j, i) = out.released_gram(i, j);
      }
    }
    out.sampler = secure_sampler_label(sampler);
    return out;
  }
  out.released_gram = diag.gram + ssp_noise(mechanism_, noise);
  out.sampler = "floating-point Bartlett draw from the kernel CSPRNG (not hardened against floating-point attacks)";
  return out;
}

// ------------------------------------------------------------------------------------------------
// LCSSF
// ------------------------------------------------------------------------------------------------

LcssfRelease::LcssfRelease(LcssfReleaseSettings s) : settings_(std::move(s)) {
  constexpr const char* fn = "LcssfRelease";
  if (settings_.algorithm != 1 && settings_.algorithm != 2) {
    throw_domain(fn, "algorithm", settings_.algorithm, "1 or 2");
  }
  check_positive_finite(fn, "epsilon", settings_.epsilon);
  if (settings_.algorithm == 2) {
    check_open_interval(fn, "delta", settings_.delta, 0.0, 1.0);
  } else if (settings_.delta != 0.0) {
    throw_domain(fn, "delta", settings_.delta, "0 for Algorithm 1 (epsilon-DP)");
  }
  if (settings_.d < 1 || settings_.d > kMaxEnumeratedPredictors) {
    throw_domain(fn, "d (predictors)", settings_.d, "in 1.." + std::to_string(kMaxEnumeratedPredictors));
  }
  if (settings_.n < 1) throw_domain(fn, "n (rows)", 0.0, ">= 1");
  check_lcssf_settings(fn, settings_.lcssf, settings_.algorithm == 2);
  // τ relative to the largest possible Gram entry n·b_x² (public), so that G + τI is numerically PD.
  const double bx = predictor_bound(settings_.lcssf.delta_kind, settings_.lcssf.data_bound);
  settings_.lcssf.singular_ridge = 1e-10 * static_cast<double>(settings_.n) * bx * bx;
}

double LcssfRelease::rss_l1_sensitivity() const {
  const LcssfSettings& l = settings_.lcssf;
  return core::rss_l1_sensitivity(l.data_bound, l.radius, l.delta_kind) + l.singular_ridge * l.radius * l.radius;
}

PrivacyGuarantee LcssfRelease::privacy() const {
  const LcssfSettings& l = settings_.lcssf;
  PrivacyGuarantee g;
  const bool valid =
      is_valid_dp_calibration(l.data_bound, l.delta_kind) && (settings_.algorithm == 2 || l.noise_factor >= 2.0);
  // Algorithm 1: report-noisy-min with Laplace(κ c Δ/ε) is ε-DP for κ ≥ 2 (any score).
  // Algorithm 2: ε for the variance, ε for the selection (docs/lcssf.md): 2ε, and δ.
  g.epsilon = valid ? (settings_.algorithm == 1 ? settings_.epsilon : 2.0 * settings_.epsilon)
                    : std::numeric_limits<double>::infinity();
  g.delta = settings_.algorithm == 1 ? 0.0 : settings_.delta;
  g.neighbouring = kReplaceOne;
  g.mechanism = settings_.algorithm == 1
                    ? "report-noisy-min over all 2^d models of the penalized constrained RSS (Lei et al. 2018, Alg. 1)"
                    : "released variance (Laplace) then the exponential mechanism on the truncated profile likelihood "
                      "(Algorithm-2-like placeholder, docs/lcssf.md)";
  g.sensitivity_name = "l1_sensitivity";
  g.sensitivity = rss_l1_sensitivity();
  g.noise_kind = settings_.algorithm == 1 ? "report-noisy-min" : "laplace+exponential";
  g.sampler = settings_.algorithm == 1
                  ? "floating-point Laplace from the kernel CSPRNG; only the argmin is released"
                  : "variance: exact discrete Laplace on a grid; selection: floating-point sampling from the kernel "
                    "CSPRNG, only the index is released";
  return g;
}

LcssfOutput LcssfRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                  const Eigen::Ref<const Eigen::VectorXd>& y, NoiseSource& noise) const {
  constexpr const char* fn = "LcssfRelease::release";
  if (x.rows() != static_cast<Eigen::Index>(settings_.n) || y.size() != x.rows() || x.cols() != settings_.d) {
    throw_invalid(fn, "the data do not have the shape of the settings (n = " + std::to_string(settings_.n) +
                          ", d = " + std::to_string(settings_.d) + ")");
  }
  const LcssfSettings& l = settings_.lcssf;
  LcssfSelection prepared = lcssf_prepare(fn, x, y, l, settings_.epsilon, settings_.algorithm == 2);
  LcssfSelection sel;
  if (settings_.algorithm == 1) {
    sel = lcssf_release_algorithm1(std::move(prepared), l, settings_.epsilon, noise);
  } else if (!noise.is_secure()) {
    sel = lcssf_release_algorithm2(std::move(prepared), settings_.n, l, settings_.epsilon, settings_.delta, noise);
  } else {
    const double nd = static_cast<double>(settings_.n);
    // S_M ≤ ‖y‖² ≤ n r² (the empty model), so S/n ≤ r² bounds the value.
    const SecureNoiseSampler sampler(ScalarMechanism::laplace(settings_.epsilon, prepared.rss_l1_sensitivity / nd), 1,
                                     l.data_bound * l.data_bound);
    const double noisy = sampler.add(lcssf_minimum_rss(prepared) / nd, noise).value;
    sel =
        lcssf_select_algorithm2(std::move(prepared), settings_.n, l, settings_.epsilon, settings_.delta, noisy, noise);
  }
  LcssfOutput out;
  out.selected = sel.selected;
  out.released_variance = sel.released_variance;
  out.variance_truncation = sel.variance_truncation;
  if (!noise.is_secure()) {
    out.diagnostics =
        LcssfDiagnostics{sel.non_private_minimiser, sel.clamped_x_entries, sel.clamped_y_entries, sel.singular_models};
  }
  return out;
}

}  // namespace dpmu::core
