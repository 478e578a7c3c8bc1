// Noise-aware Bayesian model averaging by data augmentation (noise_aware_sampler.hpp;
// docs/methods.md §5.12).

#include "dpmu/core/noise_aware_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/quantile.hpp"

namespace dpmu::core {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Matrices of at most 31 × 31 (p ≤ 30) on the stack: the log densities are evaluated millions of
/// times per release and must not allocate.
using SmallMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, 31, 31>;

/// In-place factorisation of a small symmetric matrix from its lower triangle, left-looking with
/// contiguous column updates; false when a pivot is not > 0 (A not numerically positive definite,
/// or NaN). `Ldlt` false — Cholesky A = LL': the lower triangle of `a` becomes L. `Ldlt` true — LDL'
/// (unit lower L, pivots D): the diagonal holds the pivots d_j and the strict lower triangle L; the
/// pivots are the squares of the Cholesky diagonal (log|A| = Σ log d_j, and the last pivot of [X y]
/// is the residual sum of squares) without the square roots, which made the Cholesky latency-bound
/// at these sizes. K > 0: the size at compile time (loops unrolled); K = 0: `size`. At the sizes of
/// the sampler (≤ 31, mostly ≤ 11) faster than Eigen::LLT, whose blocked code with dynamic sizes
/// dominated the sampler's profile (docs/performance.md "Noise-aware sampler"). The strict upper
/// triangle is left as it was.
template <bool Ldlt, int K>
bool factor_small(double* m, Eigen::Index ld, Eigen::Index size) {
  const Eigen::Index k = K > 0 ? K : size;
  for (Eigen::Index j = 0; j < k; ++j) {
    double* cj = m + j * ld;
    for (Eigen::Index t = 0; t < j; ++t) {
      const double* ct = m + t * ld;
      const double f = Ldlt ? ct[j] * ct[t] : ct[j];  // L(j, t) d_t, or L(j, t)
      for (Eigen::Index i = j; i < k; ++i) cj[i] -= ct[i] * f;
    }
    const double pivot = cj[j];
    if (!(pivot > 0.0)) return false;
    double inv = 1.0 / pivot;
    if constexpr (!Ldlt) {
      const double ljj = std::sqrt(pivot);
      cj[j] = ljj;
      inv = 1.0 / ljj;
    }
    for (Eigen::Index i = j + 1; i < k; ++i) cj[i] *= inv;
  }
  return true;
}

/// factor_small of `a` in place, with the compile-time size for the sizes of most calls (≤ 12).
template <bool Ldlt>
bool factor_small(SmallMatrix& a) {
  const Eigen::Index k = a.rows(), ld = a.outerStride();
  double* m = a.data();
  switch (k) {
    case 1:
      return factor_small<Ldlt, 1>(m, ld, k);
    case 2:
      return factor_small<Ldlt, 2>(m, ld, k);
    case 3:
      return factor_small<Ldlt, 3>(m, ld, k);
    case 4:
      return factor_small<Ldlt, 4>(m, ld, k);
    case 5:
      return factor_small<Ldlt, 5>(m, ld, k);
    case 6:
      return factor_small<Ldlt, 6>(m, ld, k);
    case 7:
      return factor_small<Ldlt, 7>(m, ld, k);
    case 8:
      return factor_small<Ldlt, 8>(m, ld, k);
    case 9:
      return factor_small<Ldlt, 9>(m, ld, k);
    case 10:
      return factor_small<Ldlt, 10>(m, ld, k);
    case 11:
      return factor_small<Ldlt, 11>(m, ld, k);
    case 12:
      return factor_small<Ldlt, 12>(m, ld, k);
    default:
      return factor_small<Ldlt, 0>(m, ld, k);
  }
}

bool small_cholesky(SmallMatrix& a) { return factor_small<false>(a); }
bool small_ldlt(SmallMatrix& a) { return factor_small<true>(a); }

/// Σ log v_i of positive finite values by one log: the product kept as mantissa × 2^exponent
/// (std::frexp after each factor), so it neither overflows nor underflows.
template <class V>
double sum_of_logs(const V& v) {
  double mantissa = 1.0;
  long exponent = 0;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    int e = 0;
    mantissa = std::frexp(mantissa * v(i), &e);
    exponent += e;
  }
  return std::log(mantissa) + static_cast<double>(exponent) * std::numbers::ln2;
}

/// log|A| by Cholesky; false when A is not (numerically) positive definite.
template <class M>
bool log_det_pd(const M& a, double& log_det) {
  SmallMatrix l = a;
  if (!small_ldlt(l)) return false;
  log_det = sum_of_logs(l.diagonal());
  return std::isfinite(log_det);
}

/// Q_γ = Xy_γ' XX_γγ⁻¹ Xy_γ and RSS_γ = yy − Q_γ of one model from G, by Cholesky of G[γ∪y]
/// (RSS_γ as the squared last pivot, accurate near R² = 1). false when G[γ∪y] is not PD.
template <class M>
bool model_fit(const M& gram, ModelMask model, double& q, double& rss) {
  const Eigen::Index d = gram.rows();
  const Eigen::Index p = d - 1;
  std::array<Eigen::Index, 32> idx{};
  Eigen::Index k = 0;
  for (Eigen::Index j = 0; j < p; ++j) {
    if ((model >> j) & 1U) idx[static_cast<std::size_t>(k++)] = j;
  }
  idx[static_cast<std::size_t>(k++)] = p;
  SmallMatrix sub(k, k);
  for (Eigen::Index a = 0; a < k; ++a) {
    for (Eigen::Index b = 0; b <= a; ++b)
      sub(a, b) = gram(idx[static_cast<std::size_t>(a)], idx[static_cast<std::size_t>(b)]);
  }
  if (!small_ldlt(sub)) return false;
  rss = sub(k - 1, k - 1);
  q = gram(p, p) - rss;
  return true;
}

/// The OLS coefficients b̂_γ (length p, zero outside γ) and the Cholesky factor of XX_γγ.
Eigen::VectorXd model_ols(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model, Eigen::MatrixXd* chol_lower,
                          std::vector<Eigen::Index>* index) {
  const Eigen::Index p = gram.rows() - 1;
  std::vector<Eigen::Index> idx;
  for (Eigen::Index j = 0; j < p; ++j) {
    if ((model >> j) & 1U) idx.push_back(j);
  }
  Eigen::VectorXd out = Eigen::VectorXd::Zero(p);
  const auto k = static_cast<Eigen::Index>(idx.size());
  if (k == 0) {
    if (chol_lower) chol_lower->resize(0, 0);
    if (index) index->clear();
    return out;
  }
  Eigen::MatrixXd sub(k, k);
  Eigen::VectorXd rhs(k);
  for (Eigen::Index a = 0; a < k; ++a) {
    rhs(a) = gram(idx[static_cast<std::size_t>(a)], p);
    for (Eigen::Index b = 0; b < k; ++b)
      sub(a, b) = gram(idx[static_cast<std::size_t>(a)], idx[static_cast<std::size_t>(b)]);
  }
  Eigen::LLT<Eigen::MatrixXd> llt(sub);
  const Eigen::VectorXd sol = llt.solve(rhs);
  for (Eigen::Index a = 0; a < k; ++a) out(idx[static_cast<std::size_t>(a)]) = sol(a);
  if (chol_lower) *chol_lower = llt.matrixL();
  if (index) *index = idx;
  return out;
}

void check_prior(const char* fn, const AugmentedModelPrior& prior, int p, double n) {
  if (prior.coefficient.kind != PriorKind::g_prior && prior.coefficient.kind != PriorKind::zellner_siow) {
    throw_invalid(fn, std::string("the coefficient prior must be g-prior or zellner-siow, got ") +
                          std::string(to_string(prior.coefficient.kind)));
  }
  core::check_prior(prior.coefficient);
  check_positive_finite(fn, "sigma2_shape", prior.sigma2_shape);
  check_positive_finite(fn, "sigma2_scale", prior.sigma2_scale);
  if (!(prior.design_df > p - 1.0) || !std::isfinite(prior.design_df)) {
    throw_domain(fn, "design_df", prior.design_df, "> p - 1 and finite");
  }
  if (prior.design_scale.rows() != p || prior.design_scale.cols() != p) {
    throw_invalid(fn, "design_scale must be p x p, p = " + std::to_string(p));
  }
  check_all_finite(fn, "design_scale", prior.design_scale);
  double ld = 0.0;
  if (!log_det_pd(prior.design_scale, ld)) throw_invalid(fn, "design_scale must be positive definite");
  if (!(n > p + 2.0) || !std::isfinite(n)) throw_domain(fn, "n", n, "> p + 2 and finite");
}

double fixed_g(const AugmentedModelPrior& prior, double n) { return prior.coefficient.g ? *prior.coefficient.g : n; }

/// log target of t = log g under Zellner–Siow (g ~ InvGamma(1/2, n/2)), Jacobian e^t included.
double log_g_target(double t, double n, int k, double q, double rss, double a0, double b0) {
  const double g = std::exp(t);
  if (!std::isfinite(g) || !(g > 0.0)) return kNegInf;
  const double m = a0 + 0.5 * (n - 1.0);
  return -0.5 * t - 0.5 * n / g - 0.5 * k * std::log1p(g) - m * std::log(b0 + 0.5 * (rss + q / (1.0 + g)));
}

struct Chain {
  Eigen::MatrixXd gram;
  ModelMask model = 0;
  double g = 1.0;
  double log_target = kNegInf;
  std::vector<double> width_g;      // G coordinates, (p+1)(p+2)/2
  std::vector<double> width_model;  // XX entries, b, log R: p(p+1)/2 + p + 1
  double width_log_g = 2.0;
  std::vector<double> width_white;  // XX entries with c = L⁻¹Xy and yy fixed: p(p+1)/2
  std::vector<double> width_scale;  // log column scales: p + 1
  std::vector<double> jump_g, jump_model, jump_white, jump_scale;
  double jump_log_g = 0.0;
  int adapt_count = 0;
};

struct Saved {
  std::vector<double> beta, pip, rb_mean, log_diag;  // iteration-major: it * p (+ j)
  std::vector<double> sigma2, s;
  std::vector<ModelMask> model;
};

}  // namespace

AugmentedModelPrior default_augmented_prior(const Eigen::Ref<const Eigen::VectorXd>& widths, const Prior& coefficient) {
  constexpr const char* fn = "default_augmented_prior";
  if (widths.size() < 2) throw_invalid(fn, "need p + 1 >= 2 widths");
  for (Eigen::Index j = 0; j < widths.size(); ++j) check_positive_finite(fn, "width", widths(j));
  const Eigen::Index p = widths.size() - 1;
  AugmentedModelPrior prior;
  prior.coefficient = coefficient;
  prior.design_df = static_cast<double>(p) + 2.0;
  prior.design_scale = (widths.head(p).array().square() / 16.0).matrix().asDiagonal();
  prior.sigma2_shape = 1.0;
  prior.sigma2_scale = widths(p) * widths(p) / 16.0;
  return prior;
}

double augmented_log_density(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model, double g,
                             const AugmentedModelPrior& prior) {
  const Eigen::Index d = gram.rows();
  const Eigen::Index p = d - 1;
  const SmallMatrix gm = gram;
  SmallMatrix l = gm;
  if (!small_ldlt(l)) return kNegInf;
  const auto pivots = l.diagonal();
  const double log_det_xx = sum_of_logs(pivots.head(p));
  const double r = pivots(p);
  double log_det_psi = 0.0;
  const SmallMatrix psi = prior.design_scale + gm.topLeftCorner(p, p);
  if (!log_det_pd(psi, log_det_psi)) return kNegInf;
  double q = 0.0;
  double rss = r;
  const ModelMask full = p >= 64 ? ~ModelMask{0} : ((ModelMask{1} << p) - 1);
  if ((model & full) == full) {
    q = gm(p, p) - r;
  } else if (model == 0) {
    q = 0.0;
    rss = gm(p, p);
  } else if (!model_fit(gm, model, q, rss)) {
    return kNegInf;
  }
  const double nu = n - 1.0 - static_cast<double>(p);
  const double m = prior.sigma2_shape + 0.5 * (n - 1.0);
  const int k = model_size(model);
  return 0.5 * (n - static_cast<double>(p) - 3.0) * log_det_xx - 0.5 * (n - 1.0 + prior.design_df) * log_det_psi +
         (0.5 * nu - 1.0) * std::log(r) - 0.5 * k * std::log1p(g) -
         m * std::log(prior.sigma2_scale + 0.5 * (rss + q / (1.0 + g)));
}

namespace {

/// The mechanism's noise law with its constants computed once.
struct NoiseLaw {
  bool laplace = true;
  double b = 1.0;      // Laplace scale
  double k = 0.0;      // Wishart degrees of freedom
  double scale = 1.0;  // Wishart B²
  explicit NoiseLaw(const SspMechanism& m) : laplace(m.kind == SspMechanismKind::laplace) {
    if (laplace) {
      b = ssp_laplace_scale(m);
    } else {
      const WishartParameters w = ssp_wishart_parameters(m);
      k = w.degrees_of_freedom;
      scale = w.scale;
    }
  }
  template <class A, class B>
  double log_density(const A& released_gram, const B& gram) const {
    const Eigen::Index d = gram.rows();
    if (laplace) {
      double s = 0.0;
      for (Eigen::Index j = 0; j < d; ++j) {
        for (Eigen::Index i = j; i < d; ++i) s += std::abs(released_gram(i, j) - gram(i, j));
      }
      return -s / b;
    }
    SmallMatrix m = released_gram - gram;
    m.diagonal().array() += k * scale;
    double ld = 0.0;
    if (!log_det_pd(m, ld)) return kNegInf;
    return 0.5 * (k - static_cast<double>(d) - 1.0) * ld - m.trace() / (2.0 * scale);
  }
};

}  // namespace

double mechanism_log_density(const SspMechanism& mechanism, const Eigen::Ref<const Eigen::MatrixXd>& released_gram,
                             const Eigen::Ref<const Eigen::MatrixXd>& gram) {
  check_ssp_mechanism(mechanism);
  if (released_gram.rows() != mechanism.p + 1 || released_gram.cols() != mechanism.p + 1 ||
      gram.rows() != released_gram.rows() || gram.cols() != released_gram.cols()) {
    throw_invalid("mechanism_log_density", "released_gram and gram must be (p+1)x(p+1)");
  }
  return NoiseLaw(mechanism).log_density(released_gram, gram);
}

Eigen::VectorXd augmented_model_log_weights(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, double g,
                                            const AugmentedModelPrior& prior, const ModelPrior& model_prior) {
  const auto p = static_cast<int>(gram.rows() - 1);
  const std::uint64_t count = std::uint64_t{1} << p;
  Eigen::VectorXd out(static_cast<Eigen::Index>(count));
  const double m = prior.sigma2_shape + 0.5 * (n - 1.0);
  std::vector<double> log_prior(static_cast<std::size_t>(p + 1));
  for (int k = 0; k <= p; ++k) log_prior[static_cast<std::size_t>(k)] = log_prior_model_probability(model_prior, k, p);
  const double yy = gram(p, p);
  for (std::uint64_t mask = 0; mask < count; ++mask) {
    double q = 0.0;
    double rss = yy;
    if (mask != 0 && !model_fit(gram, mask, q, rss)) {
      out(static_cast<Eigen::Index>(mask)) = kNegInf;
      continue;
    }
    const int k = model_size(mask);
    out(static_cast<Eigen::Index>(mask)) = log_prior[static_cast<std::size_t>(k)] - 0.5 * k * std::log1p(g) -
                                           m * std::log(prior.sigma2_scale + 0.5 * (rss + q / (1.0 + g)));
  }
  return out;
}

NoiseAwareSamplerResult noise_aware_sampler(const Eigen::Ref<const Eigen::MatrixXd>& released_gram,
                                            const SspMechanism& mechanism, double n, const AugmentedModelPrior& prior,
                                            const ModelPrior& model_prior, RngStream& rng,
                                            const NoiseAwareSamplerOptions& options) {
  constexpr const char* fn = "noise_aware_sampler";
  check_ssp_mechanism(mechanism);
  check_model_prior(model_prior);
  const int p = mechanism.p;
  const Eigen::Index d = p + 1;
  if (released_gram.rows() != d || released_gram.cols() != d) {
    throw_invalid(fn, "released_gram must be (p+1)x(p+1), p = " + std::to_string(p));
  }
  if (p > 30) throw_invalid(fn, "at most 30 predictors, got " + std::to_string(p));
  check_all_finite(fn, "released_gram", released_gram);
  check_prior(fn, prior, p, n);
  if (options.chains < 2) throw_domain(fn, "chains", options.chains, ">= 2");
  if (options.warmup < 0) throw_domain(fn, "warmup", options.warmup, ">= 0");
  if (options.iterations < 20) throw_domain(fn, "iterations", options.iterations, ">= 20");
  if (options.max_iterations < options.iterations) {
    throw_domain(fn, "max_iterations", options.max_iterations, ">= iterations");
  }
  if (!(options.credible_level == 0.0) && !(options.credible_level > 0.0 && options.credible_level < 1.0)) {
    throw_domain(fn, "credible_level", options.credible_level, "0 or in (0, 1)");
  }

  const Eigen::MatrixXd gstar = 0.5 * (released_gram + released_gram.transpose());
  const bool zs = prior.coefficient.kind == PriorKind::zellner_siow;
  const bool enumerate = p <= options.enumeration_limit;
  const double a0 = prior.sigma2_shape;
  const double b0 = prior.sigma2_scale;
  const double m_shape = a0 + 0.5 * (n - 1.0);
  std::vector<double> log_prior_size(static_cast<std::size_t>(p + 1));
  for (int k = 0; k <= p; ++k)
    log_prior_size[static_cast<std::size_t>(k)] = log_prior_model_probability(model_prior, k, p);
  double evaluations = 0.0;

  // Noise scale of one entry (for starts and first slice widths).
  double noise_sd = 0.0;
  double wishart_shift = 0.0;
  if (mechanism.kind == SspMechanismKind::laplace) {
    noise_sd = std::sqrt(2.0) * ssp_laplace_scale(mechanism);
  } else {
    const WishartParameters w = ssp_wishart_parameters(mechanism);
    noise_sd = w.scale * std::sqrt(w.degrees_of_freedom);
    wishart_shift = w.degrees_of_freedom * w.scale;
  }

  const NoiseLaw noise_law(mechanism);
  // Evaluations are counted by slice_sample (every call of its log_f evaluates this once).
  const auto full_log_target = [&](const Eigen::MatrixXd& gram, ModelMask model, double g) {
    const double a = augmented_log_density(gram, n, model, g, prior);
    if (!(a > kNegInf)) return kNegInf;
    return a + noise_law.log_density(gstar, gram);
  };

  // ---- Starting points: G* + cI with c dispersed over the chains, inside the support.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(gstar, Eigen::EigenvaluesOnly);
  const double eig_min = es.eigenvalues()(0);
  const int nc = options.chains;
  std::vector<Chain> chains(static_cast<std::size_t>(nc));
  const auto n_g = static_cast<std::size_t>(d * (d + 1) / 2);
  const auto n_model = static_cast<std::size_t>(p * (p + 1) / 2 + p + 1);
  for (int c = 0; c < nc; ++c) {
    Chain& ch = chains[static_cast<std::size_t>(c)];
    double lo = std::max(0.0, -eig_min) + 1e-6 * std::max(1.0, gstar.diagonal().cwiseAbs().maxCoeff());
    double hi = lo + 3.0 * noise_sd * std::sqrt(static_cast<double>(d));
    if (mechanism.kind == SspMechanismKind::wishart) hi = std::min(hi, 0.5 * (lo + wishart_shift));
    bool ok = false;
    for (int attempt = 0; attempt < 200 && !ok; ++attempt) {
      const double cshift = lo + (hi - lo) * (0.05 + 0.9 * uniform_open01(rng));
      ch.gram = gstar;
      ch.gram.diagonal().array() += cshift;
      ch.model = 0;
      for (int j = 0; j < p; ++j) {
        if (uniform_open01(rng) < 0.5) ch.model |= ModelMask{1} << j;
      }
      ch.g = zs ? 0.5 * n / standard_gamma(rng, 0.5) : fixed_g(prior, n);
      ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
      ok = std::isfinite(ch.log_target);
      if (!ok) hi = lo + 0.5 * (hi - lo);
    }
    // Wishart: the start must have G* − S + kB²I ≻ 0 and S ≻ 0, i.e. c in (−λ_min(G*), kB²). When the
    // margin above (relative to the largest diagonal entry) leaves no room — a response scale far above
    // kB² — take c at a fraction of that interval instead.
    if (!ok && mechanism.kind == SspMechanismKind::wishart && wishart_shift > -eig_min) {
      const double lo0 = std::max(0.0, -eig_min);
      for (int attempt = 0; attempt < 200 && !ok; ++attempt) {
        const double u = attempt < 100 ? 0.05 + 0.9 * uniform_open01(rng) : std::ldexp(1.0, -(attempt - 99));
        ch.gram = gstar;
        ch.gram.diagonal().array() += lo0 + u * (wishart_shift - lo0);
        ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
        ok = std::isfinite(ch.log_target);
      }
    }
    if (!ok) {
      throw_invalid(fn,
                    "no starting point with positive density was found (the release is incompatible with the "
                    "model's support); this is a bug or an invalid release");
    }
    ch.width_g.assign(n_g, noise_sd);
    ch.jump_g.assign(n_g, 0.0);
    ch.width_model.assign(n_model, 0.0);
    ch.jump_model.assign(n_model, 0.0);
    std::size_t w = 0;
    for (Eigen::Index j = 0; j < p; ++j) {
      for (Eigen::Index i = j; i < p; ++i) {
        ch.width_model[w++] = 0.05 * std::sqrt(std::abs(ch.gram(i, i) * ch.gram(j, j)));
      }
    }
    for (Eigen::Index j = 0; j < p; ++j) {
      ch.width_model[w++] = 0.1 * std::sqrt(ch.gram(p, p) / std::max(ch.gram(j, j), 1e-300));
    }
    ch.width_model[w++] = 0.1;
    ch.width_white.assign(ch.width_model.begin(), ch.width_model.begin() + p * (p + 1) / 2);
    ch.jump_white.assign(ch.width_white.size(), 0.0);
    ch.width_scale.assign(static_cast<std::size_t>(d), 0.2);
    ch.jump_scale.assign(static_cast<std::size_t>(d), 0.0);
  }

  const int max_steps = 32;

  // ---- One iteration of one chain. With enumeration, `model_probs` holds P(γ | g, S) of the
  // γ-update (the Rao–Blackwellised model probabilities of this iteration).
  Eigen::VectorXd model_probs;
  const auto sweep = [&](Chain& ch, bool adapt) {
    // (A) slice updates of the unique entries of G.
    std::size_t w = 0;
    for (Eigen::Index j = 0; j < d; ++j) {
      for (Eigen::Index i = j; i < d; ++i, ++w) {
        const double x0 = ch.gram(i, j);
        const auto logf = [&](double x) {
          ch.gram(i, j) = x;
          ch.gram(j, i) = x;
          return full_log_target(ch.gram, ch.model, ch.g);
        };
        double lf = ch.log_target;
        const double x = slice_sample(x0, ch.log_target, logf, ch.width_g[w], rng, max_steps, evaluations, &lf);
        ch.gram(i, j) = x;
        ch.gram(j, i) = x;
        ch.log_target = lf;
        if (adapt) ch.jump_g[w] += std::abs(x - x0);
      }
    }
    // (B) slice updates in the model's coordinates (XX, b = XX⁻¹Xy, log R), Jacobian |XX|·R.
    {
      Eigen::MatrixXd xx = ch.gram.topLeftCorner(p, p);
      Eigen::LLT<Eigen::MatrixXd> llt(xx);
      Eigen::VectorXd b = llt.solve(ch.gram.col(p).head(p));
      double log_r = std::log(ch.gram(p, p) - ch.gram.col(p).head(p).dot(b));
      const auto build = [&](Eigen::MatrixXd& g) {
        const Eigen::VectorXd xy = xx * b;
        g.topLeftCorner(p, p) = xx;
        g.col(p).head(p) = xy;
        g.row(p).head(p) = xy.transpose();
        g(p, p) = std::exp(log_r) + b.dot(xy);
      };
      Eigen::MatrixXd trial = ch.gram;
      const auto model_log_target = [&]() {
        build(trial);
        const double f = full_log_target(trial, ch.model, ch.g);
        if (!(f > kNegInf)) return kNegInf;
        double ld = 0.0;
        if (!log_det_pd(xx, ld)) return kNegInf;
        return f + ld + log_r;
      };
      double cur = model_log_target();
      if (std::isfinite(cur)) {
        std::size_t v = 0;
        for (Eigen::Index j = 0; j < p; ++j) {
          for (Eigen::Index i = j; i < p; ++i, ++v) {
            const double x0 = xx(i, j);
            const auto logf = [&](double x) {
              xx(i, j) = x;
              xx(j, i) = x;
              return model_log_target();
            };
            const double x = slice_sample(x0, cur, logf, ch.width_model[v], rng, max_steps, evaluations, &cur);
            xx(i, j) = x;
            xx(j, i) = x;
            if (adapt) ch.jump_model[v] += std::abs(x - x0);
          }
        }
        for (Eigen::Index j = 0; j < p; ++j, ++v) {
          const double x0 = b(j);
          const auto logf = [&](double x) {
            b(j) = x;
            return model_log_target();
          };
          const double x = slice_sample(x0, cur, logf, ch.width_model[v], rng, max_steps, evaluations, &cur);
          b(j) = x;
          if (adapt) ch.jump_model[v] += std::abs(x - x0);
        }
        {
          const double x0 = log_r;
          const auto logf = [&](double x) {
            log_r = x;
            return model_log_target();
          };
          const double x = slice_sample(x0, cur, logf, ch.width_model[v], rng, max_steps, evaluations, &cur);
          log_r = x;
          if (adapt) ch.jump_model[v] += std::abs(x - x0);
        }
        build(ch.gram);
        ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
      }
    }
    // (C) slice updates of XX with the whitened c = L⁻¹Xy (XX = LL') and yy fixed: R² and R stay
    // fixed while XX and the implied coefficients move (Jacobian |XX|^{1/2}).
    {
      Eigen::MatrixXd xx = ch.gram.topLeftCorner(p, p);
      const Eigen::MatrixXd l0 = Eigen::LLT<Eigen::MatrixXd>(xx).matrixL();
      const Eigen::VectorXd c = l0.triangularView<Eigen::Lower>().solve(ch.gram.col(p).head(p));
      Eigen::MatrixXd trial = ch.gram;
      const auto white_log_target = [&]() {
        SmallMatrix xs = xx;
        if (!small_cholesky(xs)) return kNegInf;
        const Eigen::VectorXd xy = xs.triangularView<Eigen::Lower>() * c;
        trial.topLeftCorner(p, p) = xx;
        trial.col(p).head(p) = xy;
        trial.row(p).head(p) = xy.transpose();
        const double f = full_log_target(trial, ch.model, ch.g);
        if (!(f > kNegInf)) return kNegInf;
        return f + sum_of_logs(xs.diagonal());
      };
      double cur = white_log_target();
      if (std::isfinite(cur)) {
        std::size_t v = 0;
        for (Eigen::Index j = 0; j < p; ++j) {
          for (Eigen::Index i = j; i < p; ++i, ++v) {
            const double x0 = xx(i, j);
            const auto logf = [&](double x) {
              xx(i, j) = x;
              xx(j, i) = x;
              return white_log_target();
            };
            const double x = slice_sample(x0, cur, logf, ch.width_white[v], rng, max_steps, evaluations, &cur);
            xx(i, j) = x;
            xx(j, i) = x;
            if (adapt) ch.jump_white[v] += std::abs(x - x0);
          }
        }
        white_log_target();
        ch.gram = trial;
        ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
      }
    }
    // (F) column scalings (a group move, Liu & Sabatti 2000): G → D G D with D = diag(1, …, λ, …, 1)
    // at column j, t = log λ drawn from π(D G D)·λ^{d+1} (the Jacobian on the unique entries) with
    // the Haar measure dt. Moves the scale of one column at fixed correlations: the heavy-tailed
    // directions when the release says little about G.
    for (Eigen::Index j = 0; j < d; ++j) {
      const Eigen::MatrixXd g0 = ch.gram;
      Eigen::MatrixXd trial = g0;
      const auto logf = [&](double t) {
        const double lam = std::exp(t);
        trial = g0;
        trial.row(j) *= lam;
        trial.col(j) *= lam;
        const double f = full_log_target(trial, ch.model, ch.g);
        return f > kNegInf ? f + static_cast<double>(d + 1) * t : kNegInf;
      };
      double lf = ch.log_target;
      const double t = slice_sample(0.0, ch.log_target, logf, ch.width_scale[static_cast<std::size_t>(j)], rng,
                                    max_steps, evaluations, &lf);
      logf(t);
      ch.gram = trial;
      ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
      if (adapt) ch.jump_scale[static_cast<std::size_t>(j)] += std::abs(t);
    }
    // (D) γ | g, S.
    Eigen::VectorXd pip(p);
    if (enumerate) {
      const Eigen::VectorXd lw = augmented_model_log_weights(ch.gram, n, ch.g, prior, model_prior);
      const double mx = lw.maxCoeff();
      const Eigen::VectorXd wts = (lw.array() - mx).exp().matrix();
      const double total = wts.sum();
      double u = uniform_open01(rng) * total;
      ModelMask chosen = static_cast<ModelMask>(wts.size() - 1);
      for (Eigen::Index k = 0; k < wts.size(); ++k) {
        u -= wts(k);
        if (u <= 0.0) {
          chosen = static_cast<ModelMask>(k);
          break;
        }
      }
      ch.model = chosen;
      model_probs = wts / total;
      pip.setZero();
      for (Eigen::Index k = 0; k < wts.size(); ++k) {
        for (int j = 0; j < p; ++j) {
          if ((static_cast<ModelMask>(k) >> j) & 1U) pip(j) += wts(k);
        }
      }
      pip /= total;
    } else {
      for (int j = 0; j < p; ++j) {
        double lw[2];
        for (int on = 0; on < 2; ++on) {
          const ModelMask mdl = on ? (ch.model | (ModelMask{1} << j)) : (ch.model & ~(ModelMask{1} << j));
          double q = 0.0;
          double rss = ch.gram(p, p);
          if (mdl != 0 && !model_fit(ch.gram, mdl, q, rss)) {
            lw[on] = kNegInf;
            continue;
          }
          const int k = model_size(mdl);
          lw[on] = log_prior_size[static_cast<std::size_t>(k)] - 0.5 * k * std::log1p(ch.g) -
                   m_shape * std::log(b0 + 0.5 * (rss + q / (1.0 + ch.g)));
        }
        const double p1 = 1.0 / (1.0 + std::exp(lw[0] - lw[1]));
        pip(j) = p1;
        if (uniform_open01(rng) < p1) {
          ch.model |= ModelMask{1} << j;
        } else {
          ch.model &= ~(ModelMask{1} << j);
        }
      }
    }
    ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
    // (G) joint flips of (γ_j, b_j) in the coordinates (XX, b, R): b_j − μ_j scaled by κ = √(1+g)
    // when j enters the model and by 1/κ when it leaves, μ_j the b_j at which predictor j's partial
    // covariance with y given the other predictors outside the model is 0. The map is an involution
    // with Jacobian κ^{±1}; Metropolis–Hastings acceptance min(1, π'/π · κ^{±1}) (Green 1995).
    // It moves a predictor between spike and slab in one step where the release leaves S loose.
    {
      const Eigen::MatrixXd xx = ch.gram.topLeftCorner(p, p);
      Eigen::VectorXd b = Eigen::LLT<Eigen::MatrixXd>(xx).solve(ch.gram.col(p).head(p));
      const double r_fixed = ch.gram(p, p) - ch.gram.col(p).head(p).dot(b);
      const double kappa = std::sqrt(1.0 + ch.g);
      for (int j = 0; j < p; ++j) {
        const ModelMask bit = ModelMask{1} << j;
        const ModelMask others = ch.model & ~bit;
        // Schur complement of XX[others] in XX, restricted to the predictors outside `others`.
        std::vector<Eigen::Index> in, out_idx;
        for (int k = 0; k < p; ++k) {
          if ((others >> k) & 1U) {
            in.push_back(k);
          } else {
            out_idx.push_back(k);
          }
        }
        Eigen::VectorXd col(static_cast<Eigen::Index>(out_idx.size()));  // S_{j,k}, k ∉ others
        {
          Eigen::MatrixXd a(static_cast<Eigen::Index>(in.size()), static_cast<Eigen::Index>(in.size()));
          Eigen::MatrixXd bmat(static_cast<Eigen::Index>(in.size()), static_cast<Eigen::Index>(out_idx.size()));
          for (std::size_t r1 = 0; r1 < in.size(); ++r1) {
            for (std::size_t r2 = 0; r2 < in.size(); ++r2)
              a(static_cast<Eigen::Index>(r1), static_cast<Eigen::Index>(r2)) = xx(in[r1], in[r2]);
            for (std::size_t c2 = 0; c2 < out_idx.size(); ++c2)
              bmat(static_cast<Eigen::Index>(r1), static_cast<Eigen::Index>(c2)) = xx(in[r1], out_idx[c2]);
          }
          Eigen::VectorXd xj(static_cast<Eigen::Index>(in.size()));
          for (std::size_t r1 = 0; r1 < in.size(); ++r1) xj(static_cast<Eigen::Index>(r1)) = xx(in[r1], j);
          Eigen::VectorXd corr = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(out_idx.size()));
          if (!in.empty()) corr = bmat.transpose() * Eigen::LLT<Eigen::MatrixXd>(a).solve(xj);
          for (std::size_t c2 = 0; c2 < out_idx.size(); ++c2)
            col(static_cast<Eigen::Index>(c2)) = xx(j, out_idx[c2]) - corr(static_cast<Eigen::Index>(c2));
        }
        double sjj = 0.0;
        double acc = 0.0;
        for (std::size_t c2 = 0; c2 < out_idx.size(); ++c2) {
          if (out_idx[c2] == j) {
            sjj = col(static_cast<Eigen::Index>(c2));
          } else {
            acc += col(static_cast<Eigen::Index>(c2)) * b(out_idx[c2]);
          }
        }
        if (!(sjj > 0.0)) continue;
        const double mu = -acc / sjj;
        const bool entering = !((ch.model >> j) & 1U);
        const double factor = entering ? kappa : 1.0 / kappa;
        Eigen::VectorXd b_new = b;
        b_new(j) = mu + (b(j) - mu) * factor;
        Eigen::MatrixXd trial = ch.gram;
        const Eigen::VectorXd xy = xx * b_new;
        trial.col(p).head(p) = xy;
        trial.row(p).head(p) = xy.transpose();
        trial(p, p) = r_fixed + b_new.dot(xy);
        const ModelMask model_new = entering ? (ch.model | bit) : others;
        const double f_new = full_log_target(trial, model_new, ch.g);
        evaluations += 1.0;
        // The move changes γ, so the ratio carries the model prior p(γ'), p(γ) too (full_log_target
        // is p(S | γ, g) p_E(G* − S) without it; the other moves keep γ fixed).
        const int size_old = model_size(ch.model);
        const int size_new = entering ? size_old + 1 : size_old - 1;
        const double log_prior_ratio =
            log_prior_size[static_cast<std::size_t>(size_new)] - log_prior_size[static_cast<std::size_t>(size_old)];
        if (std::log(uniform_open01(rng)) < f_new - ch.log_target + log_prior_ratio + std::log(factor)) {
          ch.gram = trial;
          ch.model = model_new;
          ch.log_target = f_new;
          b(j) = b_new(j);
        }
      }
    }
    // (E) g | γ, S (Zellner–Siow).
    double q = 0.0;
    double rss = ch.gram(p, p);
    if (ch.model != 0) model_fit(ch.gram, ch.model, q, rss);
    const int k = model_size(ch.model);
    if (zs) {
      const double t0 = std::log(ch.g);
      const auto logf = [&](double t) { return log_g_target(t, n, k, q, rss, a0, b0); };
      const double t = slice_sample(t0, logf(t0), logf, ch.width_log_g, rng, max_steps, evaluations);
      if (adapt) ch.jump_log_g += std::abs(t - t0);
      ch.g = std::exp(t);
    }
    ch.log_target = full_log_target(ch.gram, ch.model, ch.g);
    if (adapt) ++ch.adapt_count;
    return std::make_tuple(pip, q, rss);
  };

  const auto adapt_widths = [&](Chain& ch) {
    if (ch.adapt_count == 0) return;
    const double a = static_cast<double>(ch.adapt_count);
    for (std::size_t i = 0; i < ch.width_g.size(); ++i) {
      if (ch.jump_g[i] > 0.0) ch.width_g[i] = 3.0 * ch.jump_g[i] / a;
      ch.jump_g[i] = 0.0;
    }
    for (std::size_t i = 0; i < ch.width_model.size(); ++i) {
      if (ch.jump_model[i] > 0.0) ch.width_model[i] = 3.0 * ch.jump_model[i] / a;
      ch.jump_model[i] = 0.0;
    }
    for (std::size_t i = 0; i < ch.width_white.size(); ++i) {
      if (ch.jump_white[i] > 0.0) ch.width_white[i] = 3.0 * ch.jump_white[i] / a;
      ch.jump_white[i] = 0.0;
    }
    for (std::size_t i = 0; i < ch.width_scale.size(); ++i) {
      if (ch.jump_scale[i] > 0.0) ch.width_scale[i] = 3.0 * ch.jump_scale[i] / a;
      ch.jump_scale[i] = 0.0;
    }
    if (ch.jump_log_g > 0.0) ch.width_log_g = 3.0 * ch.jump_log_g / a;
    ch.jump_log_g = 0.0;
    ch.adapt_count = 0;
  };

  // ---- Warm-up with width adaptation (widths fixed afterwards: the saved chain is time-homogeneous).
  const auto warmup_total = static_cast<std::uint64_t>(nc) * static_cast<std::uint64_t>(options.warmup);
  std::uint64_t sweeps_done = 0;
  report_progress(options.progress, 0, warmup_total, "noise-aware-warmup");
  for (auto& ch : chains) {
    for (int it = 0; it < options.warmup; ++it) {
      if (++sweeps_done % 64 == 0) report_progress(options.progress, sweeps_done, warmup_total, "noise-aware-warmup");
      sweep(ch, true);
      if ((it + 1) % 50 == 0 || it + 1 == options.warmup) adapt_widths(ch);
    }
  }

  // ---- Sampling, extended until converged (below).
  std::vector<Saved> saved(static_cast<std::size_t>(nc));
  const std::uint64_t n_models = enumerate ? (std::uint64_t{1} << p) : 0;
  Eigen::VectorXd model_prob_sum = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n_models));
  struct ModelAccumulator {
    double visits = 0.0;
    double s_sum = 0.0;
    Eigen::VectorXd mean_sum;
  };
  std::unordered_map<ModelMask, ModelAccumulator> per_model;
  Eigen::MatrixXd gram_sum = Eigen::MatrixXd::Zero(d, d);
  double saved_total = 0.0;

  std::uint64_t sampled = 0;        // saved sweeps so far (all chains)
  std::uint64_t sample_target = 0;  // ... when the current batch ends
  const auto run = [&](int count) {
    sample_target = sampled + static_cast<std::uint64_t>(nc) * static_cast<std::uint64_t>(count);
    for (int c = 0; c < nc; ++c) {
      Chain& ch = chains[static_cast<std::size_t>(c)];
      Saved& sv = saved[static_cast<std::size_t>(c)];
      for (int it = 0; it < count; ++it) {
        if (++sampled % 64 == 0) report_progress(options.progress, sampled, sample_target, "noise-aware-sampling");
        auto [pip, q, rss] = sweep(ch, false);
        (void)q;
        // σ² | S, γ, g and β | σ², S, γ, g.
        const double rate = b0 + 0.5 * (rss + q / (1.0 + ch.g));
        const double sigma2 = rate / standard_gamma(rng, m_shape);
        const double s = ch.g / (1.0 + ch.g);
        Eigen::MatrixXd chol;
        std::vector<Eigen::Index> idx;
        const Eigen::VectorXd ols = model_ols(ch.gram, ch.model, &chol, &idx);
        const Eigen::VectorXd rb = s * ols;
        Eigen::VectorXd beta = rb;
        if (!idx.empty()) {
          Eigen::VectorXd z(static_cast<Eigen::Index>(idx.size()));
          for (Eigen::Index a = 0; a < z.size(); ++a) z(a) = standard_normal(rng);
          // cov = s σ² (L L')⁻¹: β = mean + sqrt(s σ²) L'⁻¹ z
          const Eigen::VectorXd dz = chol.transpose().triangularView<Eigen::Upper>().solve(z);
          for (Eigen::Index a = 0; a < z.size(); ++a)
            beta(idx[static_cast<std::size_t>(a)]) += std::sqrt(s * sigma2) * dz(a);
        }
        for (int j = 0; j < p; ++j) {
          sv.beta.push_back(beta(j));
          sv.pip.push_back(pip(j));
          sv.rb_mean.push_back(rb(j));
        }
        for (Eigen::Index j = 0; j < d; ++j) sv.log_diag.push_back(std::log(ch.gram(j, j)));
        sv.sigma2.push_back(sigma2);
        sv.s.push_back(s);
        sv.model.push_back(ch.model);
        if (enumerate) model_prob_sum += model_probs;
        ModelAccumulator& acc = per_model[ch.model];
        if (acc.mean_sum.size() == 0) acc.mean_sum = Eigen::VectorXd::Zero(p);
        acc.visits += 1.0;
        acc.s_sum += s;
        acc.mean_sum += rb;
        gram_sum += ch.gram;
        saved_total += 1.0;
      }
    }
  };

  NoiseAwareSamplerResult out;
  out.chains = nc;
  out.warmup = options.warmup;
  int per_chain = 0;
  int batch = options.iterations;
  for (;;) {
    run(batch);
    per_chain += batch;
    // Diagnostics.
    out.monitored.clear();
    const auto column = [&](auto get) {
      Eigen::MatrixXd m(per_chain, nc);
      for (int c = 0; c < nc; ++c) {
        for (int it = 0; it < per_chain; ++it) m(it, c) = get(saved[static_cast<std::size_t>(c)], it);
      }
      return m;
    };
    const auto up = static_cast<std::size_t>(p);
    const auto ud = static_cast<std::size_t>(d);
    for (int j = 0; j < p; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      out.monitored.push_back({"beta[" + std::to_string(j) + "]", summarise_chains(column([&](const Saved& s, int it) {
                                 return s.beta[static_cast<std::size_t>(it) * up + uj];
                               }))});
    }
    out.monitored.push_back({"sigma2", summarise_chains(column([&](const Saved& s, int it) {
                               return s.sigma2[static_cast<std::size_t>(it)];
                             }))});
    for (int j = 0; j < p; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      out.monitored.push_back({"pip[" + std::to_string(j) + "]", summarise_chains(column([&](const Saved& s, int it) {
                                 return s.pip[static_cast<std::size_t>(it) * up + uj];
                               }))});
    }
    for (int j = 0; j < p; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      out.monitored.push_back({"mean[" + std::to_string(j) + "]", summarise_chains(column([&](const Saved& s, int it) {
                                 return s.rb_mean[static_cast<std::size_t>(it) * up + uj];
                               }))});
    }
    for (Eigen::Index j = 0; j < d; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      out.monitored.push_back({"log_G[" + std::to_string(j) + "," + std::to_string(j) + "]",
                               summarise_chains(column([&](const Saved& s, int it) {
                                 return s.log_diag[static_cast<std::size_t>(it) * ud + uj];
                               }))});
    }
    out.max_rhat = 0.0;
    out.min_ess = std::numeric_limits<double>::infinity();
    std::string worst_rhat;
    std::string worst_ess;
    for (const auto& mq : out.monitored) {
      if (!(mq.summary.rhat <= out.max_rhat)) {
        out.max_rhat = mq.summary.rhat;
        worst_rhat = mq.name;
      }
      if (mq.summary.ess_bulk < out.min_ess) {
        out.min_ess = mq.summary.ess_bulk;
        worst_ess = mq.name;
      }
    }
    out.converged = out.max_rhat <= options.max_rhat && out.min_ess >= options.min_ess;
    // Not converged: extend the saved draws by what the diagnostics ask for, with 25 % to spare. On
    // chains near their target the bulk ESS grows about linearly with the draws and R-hat - 1 falls
    // about as their inverse, so the growth factor is 1.25 max(min_ess / ESS, (R-hat - 1) /
    // (max_rhat - 1)), at least a quarter and at most all of the draws so far. Chains far apart
    // (R-hat > 1.1, or a NaN) double. The extended chain is checked again, so a wrong guess costs
    // another extension, never a wrong verdict. (Doubling alone spent up to twice the needed draws:
    // at p = 6 the first 1 000 draws typically fall just short.)
    int next = per_chain;
    if (out.max_rhat <= 1.1 && out.min_ess > 0.0 && std::isfinite(out.min_ess)) {
      const double growth =
          1.25 * std::max(options.min_ess / out.min_ess, (out.max_rhat - 1.0) / (options.max_rhat - 1.0));
      const double more = std::ceil(per_chain * growth) - per_chain;
      next = static_cast<int>(std::clamp(more, std::max(1.0, per_chain / 4.0), static_cast<double>(per_chain)));
    }
    next = std::min(next, options.max_iterations - per_chain);
    if (out.converged || next <= 0) {
      if (!out.converged) {
        out.reason = "not converged after " + std::to_string(per_chain) + " draws per chain (" + std::to_string(nc) +
                     " chains): ";
        if (!(out.max_rhat <= options.max_rhat)) {
          out.reason += "R-hat of " + worst_rhat + " is " + format_value(out.max_rhat) + " > " +
                        format_value(options.max_rhat) + "; ";
        }
        if (out.min_ess < options.min_ess) {
          out.reason += "bulk ESS of " + worst_ess + " is " + format_value(out.min_ess) + " < " +
                        format_value(options.min_ess) + "; ";
        }
        out.reason += "raise the iteration limit or treat the answer as unreliable";
      }
      break;
    }
    batch = next;
  }
  out.iterations = per_chain;
  out.log_density_evaluations = evaluations;

  // ---- Summaries.
  BmaResult& r = out.posterior;
  r.p = p;
  const auto total = static_cast<std::size_t>(per_chain) * static_cast<std::size_t>(nc);
  const auto up = static_cast<std::size_t>(p);
  r.posterior_inclusion_probability = Eigen::VectorXd::Zero(p);
  r.model_averaged_coefficients = Eigen::VectorXd::Zero(p);
  r.posterior_sd = Eigen::VectorXd::Zero(p);
  out.pip_mc_se = Eigen::VectorXd::Zero(p);
  out.mean_mc_se = Eigen::VectorXd::Zero(p);
  for (const auto& mq : out.monitored) {
    const auto bracket = mq.name.find('[');
    const std::string base = mq.name.substr(0, bracket);
    if (base == "sigma2") {
      out.sigma2_mean = mq.summary.mean;
      out.sigma2_mc_se = mq.summary.mc_se;
      continue;
    }
    if (base == "log_G") continue;
    const int j = std::stoi(mq.name.substr(bracket + 1));
    if (base == "pip") {
      r.posterior_inclusion_probability(j) = mq.summary.mean;
      out.pip_mc_se(j) = mq.summary.mc_se;
    } else if (base == "mean") {
      r.model_averaged_coefficients(j) = mq.summary.mean;
      out.mean_mc_se(j) = mq.summary.mc_se;
    } else if (base == "beta") {
      r.posterior_sd(j) = mq.summary.sd;
    }
  }
  r.posterior_sd_bas = r.posterior_sd;
  r.prior_inclusion_probability = prior_inclusion_probabilities(model_prior, 0, p);
  r.expected_model_size = r.posterior_inclusion_probability.sum();
  r.intercept_sd = std::sqrt(out.sigma2_mean / n);
  r.intercept_sd_bas = r.intercept_sd;
  r.median_probability_model = median_probability_model(r.posterior_inclusion_probability);

  std::vector<std::vector<double>> beta_by_j(up);
  std::vector<double> intercept;
  intercept.reserve(total);
  if (options.keep_draws) {
    out.beta_draws.resize(static_cast<Eigen::Index>(total), p);
    out.sigma2_draws.resize(static_cast<Eigen::Index>(total));
    out.inclusion_draws.resize(static_cast<Eigen::Index>(total), p);
  }
  {
    // α − ȳ | σ² ~ N(0, σ²/n): one normal per draw, from the same stream.
    Eigen::Index row = 0;
    for (const Saved& sv : saved) {
      for (std::size_t it = 0; it < sv.sigma2.size(); ++it, ++row) {
        for (std::size_t j = 0; j < up; ++j) {
          beta_by_j[j].push_back(sv.beta[it * up + j]);
          if (options.keep_draws) {
            out.beta_draws(row, static_cast<Eigen::Index>(j)) = sv.beta[it * up + j];
            out.inclusion_draws(row, static_cast<Eigen::Index>(j)) = sv.pip[it * up + j];
          }
        }
        if (options.keep_draws) out.sigma2_draws(row) = sv.sigma2[it];
        intercept.push_back(std::sqrt(sv.sigma2[it] / n) * standard_normal(rng));
      }
    }
  }
  if (options.credible_level > 0.0) {
    CredibleIntervals& ci = r.credible_intervals;
    ci.level = options.credible_level;
    ci.lower.resize(p);
    ci.upper.resize(p);
    const double lo = 0.5 * (1.0 - options.credible_level);
    const double hi = 1.0 - lo;
    for (std::size_t j = 0; j < up; ++j) {
      ci.lower(static_cast<Eigen::Index>(j)) = type7_quantile(beta_by_j[j], lo);
      ci.upper(static_cast<Eigen::Index>(j)) = type7_quantile(beta_by_j[j], hi);
    }
    ci.intercept_lower = type7_quantile(intercept, lo);
    ci.intercept_upper = type7_quantile(intercept, hi);
    ci.omitted_mass = 0.0;
    ci.models = per_model.size();
  }

  // Model probabilities: Rao–Blackwellised with enumeration, visit frequencies otherwise.
  std::vector<WeightedModel> models;
  if (enumerate) {
    const Eigen::VectorXd prob = model_prob_sum / saved_total;
    r.log_posterior_probability = prob.array().log().matrix();
    for (Eigen::Index k = 0; k < prob.size(); ++k) {
      if (prob(k) > 0.0) models.push_back({static_cast<ModelMask>(k), prob(k)});
    }
  } else {
    for (const auto& [mask, acc] : per_model) models.push_back({mask, acc.visits / saved_total});
  }
  std::sort(models.begin(), models.end(), [](const WeightedModel& a, const WeightedModel& b) {
    return a.probability > b.probability || (a.probability == b.probability && a.model < b.model);
  });
  r.models_evaluated = models.size();
  r.highest_posterior_model = models.empty() ? 0 : models.front().model;
  const Eigen::MatrixXd gram_mean = gram_sum / saved_total;
  const auto coefficients_of = [&](ModelMask mdl) {
    const auto it = per_model.find(mdl);
    if (it == per_model.end()) return Eigen::VectorXd::Constant(p, std::numeric_limits<double>::quiet_NaN()).eval();
    return (it->second.mean_sum / it->second.visits).eval();
  };
  r.highest_posterior_model_coefficients = coefficients_of(r.highest_posterior_model);
  r.median_probability_model_coefficients = coefficients_of(r.median_probability_model);
  // Best predictive model among the top models, HPM and MPM (Clyde's BPM with the mean G_xx).
  {
    std::vector<ModelMask> candidates;
    for (std::size_t i = 0; i < models.size() && static_cast<int>(i) < std::max(options.top_models, 1); ++i) {
      candidates.push_back(models[i].model);
    }
    candidates.push_back(r.median_probability_model);
    double best = std::numeric_limits<double>::infinity();
    r.best_predictive_model = r.highest_posterior_model;
    const Eigen::MatrixXd gxx = gram_mean.topLeftCorner(p, p);
    for (ModelMask mdl : candidates) {
      const Eigen::VectorXd c = coefficients_of(mdl);
      if (!c.allFinite()) continue;
      const Eigen::VectorXd diff = c - r.model_averaged_coefficients;
      const double v = diff.dot(gxx * diff);
      if (v < best) {
        best = v;
        r.best_predictive_model = mdl;
      }
    }
    r.best_predictive_model_coefficients = coefficients_of(r.best_predictive_model);
  }
  const double log_prior_null = log_prior_size[0];
  for (std::size_t i = 0; i < models.size() && static_cast<int>(i) < options.top_models; ++i) {
    ModelSummary ms;
    ms.model = models[i].model;
    ms.model_size = model_size(ms.model);
    ms.log_prior_probability = log_prior_size[static_cast<std::size_t>(ms.model_size)];
    ms.posterior_probability = models[i].probability;
    ms.log_posterior_probability = std::log(models[i].probability);
    // Posterior odds over prior odds against the null model (a Bayes factor given G*), when the
    // null model has positive estimated probability; else relative to the first model.
    double ref = 0.0;
    if (enumerate && std::isfinite(r.log_posterior_probability(0))) {
      ref = r.log_posterior_probability(0) - log_prior_null;
    } else {
      ref = std::log(models.front().probability) -
            log_prior_size[static_cast<std::size_t>(model_size(models.front().model))];
    }
    ms.log_marginal = ms.log_posterior_probability - ms.log_prior_probability - ref;
    double q = 0.0;
    double rss = gram_mean(p, p);
    if (ms.model != 0 && model_fit(gram_mean, ms.model, q, rss)) ms.r_squared = q / gram_mean(p, p);
    const auto it = per_model.find(ms.model);
    ms.shrinkage =
        it != per_model.end() ? it->second.s_sum / it->second.visits : std::numeric_limits<double>::quiet_NaN();
    r.top_models.push_back(ms);
  }
  return out;
}

}  // namespace dpmu::core
