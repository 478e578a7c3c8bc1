#include "dpmu/core/bma.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"
#include "dpmu/core/priors.hpp"
#include "dpmu/core/t_mixture.hpp"

namespace dpmu::core {

namespace {

using constants::kInf;

void check_gram(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& gram) {
  if (gram.rows() != gram.cols() || gram.rows() < 1) {
    throw_invalid(fn, "gram is " + std::to_string(gram.rows()) + "x" + std::to_string(gram.cols()) +
                          ", but must be square (p+1)x(p+1)");
  }
  check_all_finite(fn, "gram", gram);
  const Eigen::Index d = gram.rows();
  const double yy = gram(d - 1, d - 1);
  if (!(yy > 0.0)) throw_domain(fn, "gram(p, p) (response sum of squares)", yy, "> 0");
}

/// Dempster's sweep (forward = true) or reverse sweep on pivot k of the symmetric matrix a.
void sweep(Eigen::MatrixXd& a, Eigen::Index k, bool forward, Eigen::VectorXd& col) {
  const Eigen::Index d = a.rows();
  const double piv = a(k, k);
  const double inv = 1.0 / piv;
  col = a.col(k);
  // a(i, j) −= col(i)·(col(j)/piv) for i, j ≠ k, a column at a time without a branch in the inner
  // loop (vectorised): row k is updated too and then overwritten below with the rest of row and
  // column k, so every other entry gets exactly the operations, in the order, of an element loop.
  for (Eigen::Index j = 0; j < d; ++j) {
    if (j == k) continue;
    const double cj = col(j) * inv;
    a.col(j) -= col * cj;
  }
  const double sign = forward ? 1.0 : -1.0;
  for (Eigen::Index i = 0; i < d; ++i) {
    if (i == k) continue;
    a(i, k) = sign * col(i) * inv;
    a(k, i) = a(i, k);
  }
  a(k, k) = -inv;
}

struct Candidate {
  double weight;
  ModelMask model;
  double log_q;  ///< log(1 − R²) as used for the weight (−inf: exact fit)
};

std::string model_string(ModelMask m) {
  std::string out = "{";
  for (int j = 0; j < 64; ++j) {
    if ((m >> j) & 1U) out += (out.size() > 1 ? ", " : "") + std::to_string(j + 1);
  }
  return out + "}";
}

[[noreturn]] void throw_exact_fit(const char* fn, ModelMask m, const CoefficientPrior& prior) {
  throw ExactFitError(m, std::string(fn) + ": the model with predictors " + model_string(m) +
                             " (1-based) fits the response exactly (R² = 1); under the " + to_string(prior) +
                             " prior its evidence is infinite, so the posterior over models is undefined");
}

/// log B_γ0 and shrinkage of a model from its log(1 − R²) (−inf: an exact fit, finite for the
/// g-prior only; ExactFitError otherwise).
BayesFactorResult marginal_or_throw(const char* fn, const CoefficientPrior& prior, double log_q, double n, int k,
                                    int p0, ModelMask m) {
  if (log_q == -kInf) {
    const auto lim = log_model_marginal_exact_fit(prior, n, k, p0);
    if (!lim) throw_exact_fit(fn, m, prior);
    return *lim;
  }
  return log_model_marginal(prior, log_q, n, k, p0);
}

/// The per-model posterior variances of docs/bma.md "Coefficients" (ModelCoefficientPosterior):
/// Var[β_j | D, γ] = slope·V_jj + between·β̂_j², BAS's sd² = slope_bas·V_jj, and the intercept's.
/// Derivation (Bayesian priors, ν = n − p0): given g, σ² | D ~ IG(ν/2, S(s)/2), S(s) = G_yy(1 − sR²),
/// and β | σ², g, D ~ N(sβ̂, sσ²V), so β | g, D ~ t_ν(sβ̂, s S(s)/ν V) with variance s S(s)/(ν − 2) V;
/// over g, E[s S(s)] = G_yy(E[s] − R² E[s²]) and the spread of the means adds Var[s] β̂β̂'. The
/// intercept (flat prior, centred predictors): α | σ², D ~ N(ȳ, σ²/n), Var = G_yy(1 − R² E[s])/((ν − 2) n).
/// bic/aic/lr (BAS's flat prior on β): ν = n − p0 − k, β | D ~ t_ν(β̂, RSS/ν V), Var = RSS/(ν − 2) V.
/// BAS (coef.bas): sd² = E[s]·mse·V_jj (no E[s] for bic/aic), mse = RSS/(n − p0 − k), intercept mse/n.
struct MomentFactors {
  double degrees_of_freedom = 0.0;
  double slope = 0.0;
  double between = 0.0;
  double slope_bas = 0.0;
  double intercept = 0.0;
  double intercept_bas = 0.0;
};

MomentFactors moment_factors(const CoefficientPrior& prior, const BayesFactorResult& bf, double syy, double log_q,
                             double n, int k, int p0) {
  const double rss = log_q == -kInf ? 0.0 : syy * std::exp(log_q);
  const double r2 = log_q == -kInf ? 1.0 : -std::expm1(log_q);
  const double residual_df = n - p0 - k;
  const double mse = rss / residual_df;
  const auto over = [](double a, double df) { return df > 2.0 ? a / (df - 2.0) : kInf; };
  MomentFactors f;
  if (!is_bayesian(prior.prior.kind)) {
    f.degrees_of_freedom = residual_df;
    f.slope = over(rss, residual_df);
    f.slope_bas = mse;
    f.intercept = over(rss, residual_df) / n;
  } else {
    const double es = bf.shrinkage;
    f.degrees_of_freedom = n - p0;
    f.slope = over(syy * std::max(0.0, es - r2 * bf.shrinkage_second_moment), n - p0);
    f.between = std::max(0.0, bf.shrinkage_second_moment - es * es);
    f.slope_bas = es * mse;
    f.intercept = over(syy * std::max(0.0, 1.0 - r2 * es), n - p0) / n;
  }
  f.intercept_bas = mse / n;
  return f;
}

/// V_jj = [G[γ,γ]^{-1}]_jj in index order, from the Cholesky factor of G[γ,γ].
Eigen::VectorXd inverse_diagonal(const Eigen::Ref<const Eigen::MatrixXd>& gram, const std::vector<Eigen::Index>& idx) {
  const auto k = static_cast<Eigen::Index>(idx.size());
  Eigen::MatrixXd sub(k, k);
  for (Eigen::Index i = 0; i < k; ++i) {
    for (Eigen::Index j = 0; j < k; ++j) sub(i, j) = 0.5 * (gram(idx[i], idx[j]) + gram(idx[j], idx[i]));
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(sub);
  const Eigen::MatrixXd l_inv =
      llt.matrixL().solve(Eigen::MatrixXd::Identity(k, k));  // V = L^{-T} L^{-1}: V_jj = ||L^{-1} e_j||²
  return l_inv.colwise().squaredNorm().transpose();
}

}  // namespace

ModelFit fit_model_from_gram(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model) {
  constexpr const char* fn = "fit_model_from_gram";
  check_gram(fn, gram);
  const Eigen::Index d = gram.rows();
  const int p = static_cast<int>(d - 1);
  if (p < 64 && (model >> p) != 0) throw_invalid(fn, "model has bits beyond p = " + std::to_string(p));
  std::vector<Eigen::Index> idx;
  for (int j = 0; j < p; ++j) {
    if ((model >> j) & 1U) idx.push_back(j);
  }
  const auto k = static_cast<Eigen::Index>(idx.size());
  idx.push_back(d - 1);
  Eigen::MatrixXd sub(k + 1, k + 1);
  for (Eigen::Index i = 0; i <= k; ++i) {
    for (Eigen::Index j = 0; j <= k; ++j) sub(i, j) = gram(idx[i], idx[j]);
  }
  Eigen::LLT<Eigen::MatrixXd> llt(sub);
  if (llt.info() != Eigen::Success) {
    throw_domain(fn, "the submatrix G[S,S] (smallest diagonal)", sub.diagonal().minCoeff(), "positive definite");
  }
  const Eigen::MatrixXd u = llt.matrixU();
  const double last = u(k, k);
  ModelFit fit;
  fit.log_one_minus_r_squared = std::min(0.0, 2.0 * std::log(std::abs(last)) - std::log(gram(d - 1, d - 1)));
  fit.r_squared = -std::expm1(fit.log_one_minus_r_squared);
  if (k > 0) {
    fit.coefficients = sub.topLeftCorner(k, k).llt().solve(sub.col(k).head(k));
  } else {
    fit.coefficients = Eigen::VectorXd(0);
  }
  return fit;
}

namespace {

std::vector<Eigen::Index> model_indices(ModelMask model, int p) {
  std::vector<Eigen::Index> idx;
  for (int j = 0; j < p; ++j) {
    if ((model >> j) & 1U) idx.push_back(j);
  }
  return idx;
}

/// Cholesky L of G[γ,γ] in index order with the pivot test of the enumeration: false (rank
/// deficient) if a pivot is ≤ tol·G_jj or not positive.
bool factor_predictors(const Eigen::Ref<const Eigen::MatrixXd>& gram, const std::vector<Eigen::Index>& idx, double tol,
                       Eigen::MatrixXd& l) {
  const auto k = static_cast<Eigen::Index>(idx.size());
  l = Eigen::MatrixXd::Zero(k, k);
  for (Eigen::Index i = 0; i < k; ++i) {
    for (Eigen::Index j = 0; j <= i; ++j) {
      double v = 0.5 * (gram(idx[i], idx[j]) + gram(idx[j], idx[i]));
      for (Eigen::Index m = 0; m < j; ++m) v -= l(i, m) * l(j, m);
      if (i == j) {
        const double gjj = gram(idx[i], idx[i]);
        if (!(v > tol * gjj && v > 0.0)) return false;
        l(i, i) = std::sqrt(v);
      } else {
        l(i, j) = v / l(j, j);
      }
    }
  }
  return true;
}

/// The predictors of `model` pass the pivot test (G[γ,γ] numerically PD).
bool predictors_full_rank(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model, double tol) {
  Eigen::MatrixXd l;
  return factor_predictors(gram, model_indices(model, static_cast<int>(gram.rows() - 1)), tol, l);
}

}  // namespace

GramModelFit classify_model_fit(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model, double tol) {
  constexpr const char* fn = "classify_model_fit";
  check_gram(fn, gram);
  const Eigen::Index d = gram.rows();
  const int p = static_cast<int>(d - 1);
  if (p < 64 && (model >> p) != 0) throw_invalid(fn, "model has bits beyond p = " + std::to_string(p));
  const std::vector<Eigen::Index> idx = model_indices(model, p);
  const auto k = static_cast<Eigen::Index>(idx.size());
  const Eigen::Index y = d - 1;
  GramModelFit out;
  Eigen::MatrixXd l;
  if (!factor_predictors(gram, idx, tol, l)) return out;  // rank deficient
  Eigen::VectorXd z(k);
  for (Eigen::Index i = 0; i < k; ++i) {
    double v = 0.5 * (gram(idx[i], y) + gram(y, idx[i]));
    for (Eigen::Index m = 0; m < i; ++m) v -= l(i, m) * z(m);
    z(i) = v / l(i, i);
  }
  const double syy = gram(y, y);
  const double rss = syy - z.squaredNorm();
  out.coefficients = l.transpose().triangularView<Eigen::Upper>().solve(z);
  if (rss < -kExactFitTolerance * syy || std::isnan(rss)) return out;  // G[γ∪y] indefinite (a noisy G*)
  if (!(rss > kExactFitTolerance * syy)) {
    out.kind = GramFitKind::exact_fit;
    out.log_one_minus_r_squared = -kInf;
    out.r_squared = 1.0;
    return out;
  }
  out.kind = GramFitKind::full_rank;
  out.log_one_minus_r_squared = std::min(0.0, std::log(rss) - std::log(syy));
  out.r_squared = -std::expm1(out.log_one_minus_r_squared);
  return out;
}

std::optional<ModelMask> find_exact_fit_model(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask always_included,
                                              double tol) {
  check_gram("find_exact_fit_model", gram);
  const int p = static_cast<int>(gram.rows() - 1);
  // A maximal independent set, forced predictors first.
  ModelMask set = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int j = 0; j < p; ++j) {
      const bool forced = (always_included >> j) & 1U;
      if (forced != (pass == 0)) continue;
      const ModelMask trial = set | (1ULL << j);
      if (!predictors_full_rank(gram, trial, tol)) {
        if (forced) return std::nullopt;  // every admissible model is rank deficient
        continue;
      }
      set = trial;
    }
  }
  if (classify_model_fit(gram, set, tol).kind != GramFitKind::exact_fit) return std::nullopt;
  // Drop free predictors (from the last) while the fit stays exact.
  for (int j = p - 1; j >= 0; --j) {
    if (!((set >> j) & 1U) || ((always_included >> j) & 1U)) continue;
    const ModelMask trial = set & ~(1ULL << j);
    if (classify_model_fit(gram, trial, tol).kind == GramFitKind::exact_fit) set = trial;
  }
  return set;
}

void check_finite_evidence(const Eigen::Ref<const Eigen::MatrixXd>& gram, const CoefficientPrior& prior,
                           ModelMask always_included, double tol, double n, int p0) {
  constexpr const char* fn = "bayesian_model_averaging";
  if (exact_fit_has_finite_evidence(prior)) return;
  if (const auto m = find_exact_fit_model(gram, always_included, tol)) {
    if (n > model_size(*m) + p0) throw_exact_fit(fn, *m, prior);
  }
}

Eigen::VectorXd prior_inclusion_probabilities(const ModelPrior& model_prior, ModelMask always_included, int p) {
  const double pi = prior_inclusion_probability(model_prior);
  Eigen::VectorXd out(p);
  for (int j = 0; j < p; ++j) out(j) = ((always_included >> j) & 1U) ? 1.0 : pi;
  return out;
}

std::vector<RankDeficientColumn> rank_deficient_columns(const Eigen::Ref<const Eigen::MatrixXd>& gram, double tol) {
  check_gram("rank_deficient_columns", gram);
  const int p = static_cast<int>(gram.rows() - 1);
  std::vector<RankDeficientColumn> out;
  ModelMask set = 0;
  std::vector<int> members;
  for (int j = 0; j < p; ++j) {
    const double gjj = gram(j, j);
    if (!(gjj > 0.0)) {
      out.push_back({j, true, 0});
      continue;
    }
    if (predictors_full_rank(gram, set | (1ULL << j), tol)) {
      set |= 1ULL << j;
      members.push_back(j);
      continue;
    }
    // Coefficients of column j on the independent set: which of them it depends on.
    const auto k = static_cast<Eigen::Index>(members.size());
    Eigen::MatrixXd a(k, k);
    Eigen::VectorXd b(k);
    for (Eigen::Index r = 0; r < k; ++r) {
      for (Eigen::Index c = 0; c < k; ++c) a(r, c) = gram(members[r], members[c]);
      b(r) = gram(members[r], j);
    }
    const Eigen::VectorXd beta = a.ldlt().solve(b);
    RankDeficientColumn rd{j, false, 0};
    for (Eigen::Index r = 0; r < k; ++r) {
      const double standardised = std::abs(beta(r)) * std::sqrt(gram(members[r], members[r]) / gjj);
      if (standardised > 1e-6) rd.collinear_with |= 1ULL << members[r];
    }
    out.push_back(rd);
  }
  return out;
}

ModelCoefficientPosterior model_coefficient_posterior(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                                      ModelMask model, const CoefficientPrior& prior, int p0) {
  constexpr const char* fn = "model_coefficient_posterior";
  const GramModelFit fit = classify_model_fit(gram, model);  // checks G and the mask
  if (fit.kind == GramFitKind::rank_deficient) {
    throw std::domain_error(std::string(fn) + ": the model with predictors " + model_string(model) +
                            " (1-based) is rank deficient (G[γ,γ] singular): its coefficients are not identified");
  }
  const int p = static_cast<int>(gram.rows() - 1);
  const int k = model_size(model);
  if (!(n > k + p0)) throw_domain(fn, "n", n, "> |γ| + p0 = " + std::to_string(k + p0));
  const double syy = gram(p, p);
  const double log_q = fit.log_one_minus_r_squared;
  const BayesFactorResult bf = marginal_or_throw(fn, prior, log_q, n, k, p0, model);
  const MomentFactors mf = moment_factors(prior, bf, syy, log_q, n, k, p0);
  const std::vector<Eigen::Index> idx = model_indices(model, p);
  const Eigen::VectorXd v = inverse_diagonal(gram, idx);
  ModelCoefficientPosterior out;
  out.model = model;
  out.degrees_of_freedom = mf.degrees_of_freedom;
  out.r_squared = fit.r_squared;
  out.mean = Eigen::VectorXd::Zero(p);
  out.sd = Eigen::VectorXd::Zero(p);
  out.sd_bas = Eigen::VectorXd::Zero(p);
  out.ols = Eigen::VectorXd::Zero(p);
  out.inverse_gram_diagonal = Eigen::VectorXd::Zero(p);
  for (std::size_t c = 0; c < idx.size(); ++c) {
    const Eigen::Index j = idx[c];
    const double beta = fit.coefficients(static_cast<Eigen::Index>(c));
    const double vj = v(static_cast<Eigen::Index>(c));
    out.ols(j) = beta;
    out.inverse_gram_diagonal(j) = vj;
    out.mean(j) = bf.shrinkage * beta;
    out.sd(j) = std::sqrt(mf.slope * vj + mf.between * beta * beta);
    out.sd_bas(j) = std::sqrt(mf.slope_bas * vj);
  }
  out.intercept_sd = std::sqrt(mf.intercept);
  out.intercept_sd_bas = std::sqrt(mf.intercept_bas);
  out.shrinkage = shrinkage_posterior(prior, log_q, n, k, p0);
  return out;
}

namespace {

/// The shared last step for the enumeration: the most probable candidates up to interval_mass.
template <class Candidates>
void summarise_enumerated_models(const Eigen::MatrixXd& gram, double n, const CoefficientPrior& prior,
                                 const BmaOptions& options, const Candidates& sorted, double log_z, BmaResult& res) {
  std::vector<WeightedModel> models;
  double kept = 0.0;
  for (const auto& c : sorted) {
    if (static_cast<int>(models.size()) >= options.interval_max_models || kept >= options.interval_mass) break;
    models.push_back({c.model, std::exp(c.weight - log_z)});
    kept += models.back().probability;
  }
  summarise_models(gram, n, prior, options.p0, models, std::max(0.0, 1.0 - kept), options.credible_level, res);
}

}  // namespace

void add_model_components(const ModelCoefficientPosterior& post, double gram_yy, double n,
                          const CoefficientPrior& prior, double probability, CoefficientMixture& mix) {
  const int p = static_cast<int>(mix.slopes.size());
  const bool bayesian = is_bayesian(prior.prior.kind);
  const double nu = post.degrees_of_freedom;
  const double rss = gram_yy * (1.0 - post.r_squared);
  for (std::size_t i = 0; i < post.shrinkage.shrinkage.size(); ++i) {
    const double w = probability * post.shrinkage.probability[i];
    if (w < kMixtureNodeFloor) {
      mix.omitted_mass += w;
      continue;
    }
    const double s = bayesian ? post.shrinkage.shrinkage[i] : 1.0;
    const double spread = bayesian ? gram_yy * std::max(0.0, 1.0 - s * post.r_squared) / nu : rss / nu;
    mix.intercept.push_back({w, 0.0, std::sqrt(spread / n), nu});
    for (int j = 0; j < p; ++j) {
      if (!((post.model >> j) & 1U)) continue;
      const double scale = std::sqrt((bayesian ? s : 1.0) * spread * post.inverse_gram_diagonal(j));
      mix.slopes[static_cast<std::size_t>(j)].push_back({w, s * post.ols(j), scale, nu});
    }
  }
  for (int j = 0; j < p; ++j) {
    if (!((post.model >> j) & 1U)) mix.slope_point_mass[static_cast<std::size_t>(j)] += probability;
  }
}

std::vector<CredibleIntervals> mixture_credible_intervals(const CoefficientMixture& mix,
                                                          const std::vector<double>& levels) {
  for (const double level : levels) check_open_interval("mixture_credible_intervals", "level", level, 0.0, 1.0);
  if (levels.empty()) return {};
  const int p = static_cast<int>(mix.slopes.size());
  std::vector<CredibleIntervals> out(levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) {
    out[l].level = levels[l];
    out[l].lower.resize(p);
    out[l].upper.resize(p);
  }
  // Each coefficient's mixture is built once and inverted at every level (it caches F(0⁻), which
  // both ends of every interval need). Each drops its lightest components up to
  // TMixture::kDefaultTau of its mass; the largest share dropped joins the bound on the CDF error.
  double dropped = 0.0;
  const auto ends = [&](const TMixture& t) {  // (lower, upper) at each level
    std::vector<std::pair<double, double>> e(levels.size());
    for (std::size_t l = 0; l < levels.size(); ++l) {
      e[l] = {t.quantile(0.5 * (1.0 - levels[l])), t.quantile(0.5 * (1.0 + levels[l]))};
    }
    dropped = std::max(dropped, t.dropped_mass());
    return e;
  };
  for (int j = 0; j < p; ++j) {
    const auto e =
        ends(TMixture(mix.slope_point_mass[static_cast<std::size_t>(j)], mix.slopes[static_cast<std::size_t>(j)]));
    for (std::size_t l = 0; l < levels.size(); ++l) std::tie(out[l].lower(j), out[l].upper(j)) = e[l];
  }
  const auto e = ends(TMixture(0.0, mix.intercept));
  for (std::size_t l = 0; l < levels.size(); ++l) std::tie(out[l].intercept_lower, out[l].intercept_upper) = e[l];
  for (CredibleIntervals& ci : out) ci.omitted_mass = std::min(1.0, mix.omitted_mass + dropped);
  return out;
}

CredibleIntervals mixture_credible_intervals(const CoefficientMixture& mix, double level) {
  return std::move(mixture_credible_intervals(mix, std::vector<double>{level}).front());
}

void summarise_models(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, const CoefficientPrior& prior, int p0,
                      const std::vector<WeightedModel>& models, double omitted_mass, double level, BmaResult& res) {
  const int p = static_cast<int>(gram.rows() - 1);
  const auto coefficients_or_nan = [&](ModelMask m) {
    try {
      return model_coefficient_posterior(gram, n, m, prior, p0).mean;
    } catch (const ExactFitError&) {
      throw;
    } catch (const std::domain_error&) {  // rank deficient or not estimable
      return Eigen::VectorXd::Constant(p, std::numeric_limits<double>::quiet_NaN()).eval();
    }
  };
  res.highest_posterior_model_coefficients = coefficients_or_nan(res.highest_posterior_model);
  res.median_probability_model_coefficients = coefficients_or_nan(res.median_probability_model);
  res.best_predictive_model = res.highest_posterior_model;
  res.best_predictive_model_coefficients = res.highest_posterior_model_coefficients;
  res.credible_intervals = CredibleIntervals{};
  if (models.empty()) return;
  const bool intervals = level > 0.0;
  if (intervals) check_open_interval("summarise_models", "credible level", level, 0.0, 1.0);
  CoefficientMixture mix(p);
  mix.omitted_mass = omitted_mass;
  const Eigen::MatrixXd gxx = 0.5 * (gram.topLeftCorner(p, p) + gram.topLeftCorner(p, p).transpose());
  double best_distance = INFINITY;
  const double syy = gram(p, p);
  for (const WeightedModel& wm : models) {
    const ModelCoefficientPosterior post = model_coefficient_posterior(gram, n, wm.model, prior, p0);
    const Eigen::VectorXd d = post.mean - res.model_averaged_coefficients;
    const double distance = d.dot(gxx * d);
    if (distance < best_distance) {
      best_distance = distance;
      res.best_predictive_model = wm.model;
      res.best_predictive_model_coefficients = post.mean;
    }
    if (intervals) add_model_components(post, syy, n, prior, wm.probability, mix);
  }
  if (!intervals) return;
  res.credible_intervals = mixture_credible_intervals(mix, level);
  res.credible_intervals.models = models.size();
}

BmaResult bayesian_model_averaging(const Eigen::Ref<const Eigen::MatrixXd>& gram_in, double n,
                                   const CoefficientPrior& prior, const ModelPrior& model_prior,
                                   const BmaOptions& options) {
  constexpr const char* fn = "bayesian_model_averaging";
  check_gram(fn, gram_in);
  check_coefficient_prior(prior);
  check_model_prior(model_prior);
  const Eigen::Index d = gram_in.rows();
  const int p = static_cast<int>(d - 1);
  if (p > 30 || (options.keep_all_models && p > 24)) {
    throw_invalid(fn, "p = " + std::to_string(p) +
                          " is too large for full enumeration (at most 24 with "
                          "keep_all_models, 30 without)");
  }
  if (p < 64 && (options.always_included >> p) != 0) throw_invalid(fn, "always_included has bits beyond p");
  if (options.p0 < 0) throw_domain(fn, "p0", options.p0, ">= 0");
  if (!(std::isfinite(n) && n > p + options.p0)) {
    throw_domain(fn, "n", n, "finite and > p + p0 = " + std::to_string(p + options.p0));
  }
  if (options.top_models < 0) throw_domain(fn, "top_models", options.top_models, ">= 0");
  if (options.credible_level != 0.0) check_open_interval(fn, "credible_level", options.credible_level, 0.0, 1.0);
  // Symmetrise (the lower triangle is authoritative for accumulated Gram matrices as well).
  Eigen::MatrixXd gram = gram_in;
  gram = 0.5 * (gram + gram.transpose()).eval();
  const Eigen::Index y = d - 1;
  const double log_syy = std::log(gram(y, y));
  check_finite_evidence(gram, prior, options.always_included, options.collinearity_tolerance);

  std::vector<int> free_idx;
  for (int j = 0; j < p; ++j) {
    if (!((options.always_included >> j) & 1U)) free_idx.push_back(j);
  }
  const int f = static_cast<int>(free_idx.size());
  std::vector<double> log_model_prior(static_cast<std::size_t>(f + 1));
  for (int s = 0; s <= f; ++s)
    log_model_prior[static_cast<std::size_t>(s)] = log_prior_model_probability(model_prior, s, f);

  // Heredity groups: a model is admissible when it holds all or none of each group.
  for (const ModelMask g : options.heredity_groups) {
    if (g == 0 || (p < 64 && (g >> p) != 0)) throw_invalid(fn, "a heredity group is empty or has bits beyond p");
  }
  for (const auto& h : options.heredity_parents) {
    if (h.term == 0 || h.parents == 0 || (p < 64 && ((h.term | h.parents) >> p) != 0) || (h.term & h.parents) != 0) {
      throw_invalid(fn, "a heredity rule has an empty term or parents, bits beyond p, or a term among its parents");
    }
  }
  const bool restricted = !options.heredity_groups.empty() || !options.heredity_parents.empty();
  const auto admissible = [&](ModelMask m) {
    for (const ModelMask g : options.heredity_groups) {
      if ((m & g) != 0 && (m & g) != g) return false;
    }
    for (const auto& h : options.heredity_parents) {
      if ((m & h.term) != 0 && (m & h.parents) != h.parents) return false;
    }
    return true;
  };

  BmaResult res;
  res.p = p;
  res.prior_inclusion_probability = prior_inclusion_probabilities(model_prior, options.always_included, p);
  if (restricted) {
    // The model prior renormalised over the admissible models: P(j in γ) = Σ_{admissible γ ∋ j} π(γ) / Σ π(γ).
    Eigen::VectorXd incl = Eigen::VectorXd::Zero(p);
    double total = 0.0;
    for (std::uint64_t i = 0; i < (1ULL << f); ++i) {
      ModelMask m = options.always_included;
      for (int b = 0; b < f; ++b) {
        if ((i >> b) & 1U) m |= 1ULL << free_idx[static_cast<std::size_t>(b)];
      }
      if (!admissible(m)) continue;
      const double w = std::exp(log_model_prior[static_cast<std::size_t>(__builtin_popcountll(i))]);
      total += w;
      for (int j = 0; j < p; ++j) {
        if ((m >> j) & 1U) incl(j) += w;
      }
    }
    res.prior_inclusion_probability = incl / total;
    // Per-model prior probabilities renormalised over the admissible models (the posterior is unchanged).
    for (double& l : log_model_prior) l -= std::log(total);
  }
  if (options.keep_all_models) {
    res.log_posterior_probability = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(1ULL << p), -kInf);
  }

  // Sweep state.
  Eigen::MatrixXd a = gram;
  Eigen::VectorXd sweep_buffer(d);
  std::vector<char> swept(static_cast<std::size_t>(p), 0);
  std::vector<char> pending(static_cast<std::size_t>(p), 0);
  int n_pending = 0;
  const double tol = options.collinearity_tolerance;
  const auto try_sweep = [&](int j) {
    const double piv = a(j, j);
    if (piv > tol * gram(j, j) && piv > 0.0) {
      sweep(a, j, true, sweep_buffer);
      swept[static_cast<std::size_t>(j)] = 1;
      return true;
    }
    return false;
  };
  const auto add = [&](int j) {
    if (!try_sweep(j)) {
      pending[static_cast<std::size_t>(j)] = 1;
      ++n_pending;
    }
  };
  const auto remove = [&](int j) {
    if (pending[static_cast<std::size_t>(j)]) {
      pending[static_cast<std::size_t>(j)] = 0;
      --n_pending;
      return;
    }
    sweep(a, j, false, sweep_buffer);
    swept[static_cast<std::size_t>(j)] = 0;
    if (n_pending > 0) {
      for (int k = 0; k < p; ++k) {
        if (pending[static_cast<std::size_t>(k)] && try_sweep(k)) {
          pending[static_cast<std::size_t>(k)] = 0;
          --n_pending;
        }
      }
    }
  };
  const auto rebuild = [&](ModelMask current) {
    a = gram;
    std::fill(swept.begin(), swept.end(), 0);
    std::fill(pending.begin(), pending.end(), 0);
    n_pending = 0;
    for (int j = 0; j < p; ++j) {
      if ((current >> j) & 1U) add(j);
    }
  };

  ModelMask mask = options.always_included;
  rebuild(mask);

  // Running accumulators, scaled by exp(-max_weight).
  double max_w = -kInf;
  double z = 0.0;
  Eigen::VectorXd incl = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd coef = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd second = Eigen::VectorXd::Zero(p);      // Σ e·E[β_j² | D, γ]
  Eigen::VectorXd second_bas = Eigen::VectorXd::Zero(p);  // Σ e·(sd_bas² + m²)
  double intercept_var = 0.0;
  double intercept_var_bas = 0.0;
  std::vector<Candidate> top;
  const std::size_t keep_top =
      static_cast<std::size_t>(std::max(options.top_models, std::max(options.interval_max_models, 0)));

  // Pruning (BmaOptions::negligible_log_odds): only where the evidence is a quadrature of a proper
  // mixture of g-priors, whose log B is bounded by log_likelihood_sup_over_g.
  const bool prunable =
      std::isfinite(options.negligible_log_odds) && !is_approximate(prior) &&
      visit_prior_kind(prior.prior.kind, [](auto unit) { return priors::is_mixture<typename decltype(unit)::type>; });
  if (std::isnan(options.negligible_log_odds) || options.negligible_log_odds < 0.0) {
    throw_domain(fn, "negligible_log_odds", options.negligible_log_odds, ">= 0 (or +inf: no pruning)");
  }

  const std::uint64_t total = 1ULL << f;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i % kProgressInterval == 0) report_progress(options.progress, i, total, "enumeration");
    if (i > 0) {
      const int bit = __builtin_ctzll(i);
      const int j = free_idx[static_cast<std::size_t>(bit)];
      mask ^= (1ULL << j);
      if ((mask >> j) & 1U) {
        add(j);
      } else {
        remove(j);
      }
      if (options.refresh_interval > 0 && i % static_cast<std::uint64_t>(options.refresh_interval) == 0) {
        rebuild(mask);
      }
    }
    if (restricted && !admissible(mask)) {
      ++res.models_heredity_excluded;
      continue;
    }
    if (n_pending > 0) {
      ++res.models_rank_deficient;
      continue;
    }
    const int k = model_size(mask);
    double rss = a(y, y);
    double log_q = 0.0;
    bool refit = !(rss > 1e-10 * gram(y, y));
    Eigen::VectorXd beta_refit;
    Eigen::VectorXd v_refit;
    if (!refit) {
      log_q = std::min(0.0, std::log(rss) - log_syy);
    } else {
      // Small RSS: refit by Cholesky; an exact fit (G[γ,γ] PD, R² = 1) is not rank deficient.
      const GramModelFit fit = classify_model_fit(gram, mask, tol);
      if (fit.kind == GramFitKind::rank_deficient) {
        ++res.models_rank_deficient;
        continue;
      }
      if (fit.kind == GramFitKind::exact_fit) ++res.models_exact_fit;
      log_q = fit.log_one_minus_r_squared;
      beta_refit = fit.coefficients;
      v_refit = inverse_diagonal(gram, model_indices(mask, p));
    }
    const int free_size = k - model_size(options.always_included);
    if (prunable && log_q > -kInf &&
        log_model_prior[static_cast<std::size_t>(free_size)] + log_likelihood_sup_over_g(log_q, n, k, options.p0) <
            max_w - options.negligible_log_odds) {
      ++res.models_negligible;
      continue;
    }
    const BayesFactorResult bf = marginal_or_throw(fn, prior, log_q, n, k, options.p0, mask);
    const double w = log_model_prior[static_cast<std::size_t>(free_size)] + bf.log_bayes_factor;
    if (!std::isfinite(w)) {
      throw_domain(fn,
                   "the log marginal likelihood of the model with predictors " + model_string(mask) + " (" +
                       to_string(prior) + " prior)",
                   bf.log_bayes_factor, "finite");
    }
    ++res.models_evaluated;
    if (options.keep_all_models) res.log_posterior_probability(static_cast<Eigen::Index>(mask)) = w;
    if (w > max_w) {
      const double scale = std::isfinite(max_w) ? std::exp(max_w - w) : 0.0;
      z *= scale;
      incl *= scale;
      coef *= scale;
      second *= scale;
      second_bas *= scale;
      intercept_var *= scale;
      intercept_var_bas *= scale;
      max_w = w;
      res.highest_posterior_model = mask;
    }
    const double e = std::exp(w - max_w);
    z += e;
    const MomentFactors mf = moment_factors(prior, bf, gram(y, y), log_q, n, k, options.p0);
    intercept_var += e * mf.intercept;
    intercept_var_bas += e * mf.intercept_bas;
    Eigen::Index pos = 0;
    for (int j = 0; j < p; ++j) {
      if ((mask >> j) & 1U) {
        const double beta = refit ? beta_refit(pos) : a(j, y);
        const double v = refit ? v_refit(pos) : -a(j, j);  // the swept block holds −G[γ,γ]^{-1}
        const double m = bf.shrinkage * beta;
        incl(j) += e;
        coef(j) += e * m;
        second(j) += e * (m * m + mf.slope * v + mf.between * beta * beta);
        second_bas(j) += e * (m * m + mf.slope_bas * v);
        ++pos;
      }
    }
    if (keep_top > 0) {
      top.push_back({w, mask, log_q});
      if (top.size() >= 4 * keep_top + 64) {
        std::nth_element(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(keep_top), top.end(),
                         [](const Candidate& l, const Candidate& r) { return l.weight > r.weight; });
        top.resize(keep_top);
      }
    }
  }
  report_progress(options.progress, total, total, "enumeration");
  if (!(z > 0.0)) {
    throw std::domain_error(std::string(fn) +
                            ": every model is rank deficient (the forced predictors are constant or collinear, or no "
                            "submatrix G[γ,γ] with γ ⊇ the forced predictors is positive definite)");
  }
  const double log_z = max_w + std::log(z);
  res.posterior_inclusion_probability = (incl / z).cwiseMin(1.0);
  for (int j = 0; j < p; ++j) {
    if ((options.always_included >> j) & 1U) res.posterior_inclusion_probability(j) = 1.0;
  }
  res.model_averaged_coefficients = coef / z;
  const Eigen::ArrayXd mean_sq = res.model_averaged_coefficients.array().square();
  res.posterior_sd = (second.array() / z - mean_sq).max(0.0).sqrt().matrix();
  res.posterior_sd_bas = (second_bas.array() / z - mean_sq).max(0.0).sqrt().matrix();
  res.intercept_sd = std::sqrt(intercept_var / z);
  res.intercept_sd_bas = std::sqrt(intercept_var_bas / z);
  res.expected_model_size = res.posterior_inclusion_probability.sum();
  res.median_probability_model = median_probability_model(res.posterior_inclusion_probability);
  if (options.keep_all_models) res.log_posterior_probability.array() -= log_z;

  std::sort(top.begin(), top.end(), [](const Candidate& l, const Candidate& r) {
    return l.weight != r.weight ? l.weight > r.weight : l.model < r.model;
  });
  if (top.size() > keep_top) top.resize(keep_top);
  summarise_enumerated_models(gram, n, prior, options, top, log_z, res);
  if (top.size() > static_cast<std::size_t>(options.top_models)) {
    top.resize(static_cast<std::size_t>(options.top_models));
  }
  for (const Candidate& c : top) {
    ModelSummary s;
    s.model = c.model;
    s.model_size = model_size(c.model);
    s.log_prior_probability =
        log_model_prior[static_cast<std::size_t>(s.model_size - model_size(options.always_included))];
    s.r_squared = c.log_q == -kInf ? 1.0 : -std::expm1(c.log_q);
    const BayesFactorResult bf = marginal_or_throw(fn, prior, c.log_q, n, s.model_size, options.p0, c.model);
    s.log_marginal = bf.log_bayes_factor;
    s.shrinkage = bf.shrinkage;
    s.log_posterior_probability = c.weight - log_z;
    s.posterior_probability = std::exp(s.log_posterior_probability);
    res.top_models.push_back(s);
  }
  return res;
}

Eigen::VectorXd posterior_inclusion_probability(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                                const CoefficientPrior& prior, const ModelPrior& model_prior,
                                                const BmaOptions& options) {
  BmaOptions o = options;
  o.keep_all_models = false;
  o.top_models = 0;
  o.credible_level = 0.0;
  o.interval_max_models = 0;
  return bayesian_model_averaging(gram, n, prior, model_prior, o).posterior_inclusion_probability;
}

Eigen::VectorXd model_averaged_coefficients(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                            const CoefficientPrior& prior, const ModelPrior& model_prior,
                                            const BmaOptions& options) {
  BmaOptions o = options;
  o.keep_all_models = false;
  o.top_models = 0;
  o.credible_level = 0.0;
  o.interval_max_models = 0;
  return bayesian_model_averaging(gram, n, prior, model_prior, o).model_averaged_coefficients;
}

namespace {

/// The fit, the marginal likelihood and the log weight of one model: the steps evaluate_model and
/// evaluate_model_weight share (one computation, so their weights are the same numbers).
/// `estimable` is false for a rank-deficient model or when n <= k + p0 (weight −inf).
struct WeighedModel {
  bool estimable = false;
  GramModelFit fit;
  BayesFactorResult bf;
  int k = 0;
  double log_weight = -INFINITY;
};

WeighedModel weigh_model(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model,
                         const CoefficientPrior& prior, const ModelPrior& model_prior, ModelMask always_included,
                         int p0) {
  const int p = static_cast<int>(gram.rows() - 1);
  WeighedModel w;
  w.fit = classify_model_fit(gram, model);
  if (w.fit.kind == GramFitKind::rank_deficient) return w;
  int free_count = 0;
  int free_size = 0;
  for (int j = 0; j < p; ++j) {
    if (!((always_included >> j) & 1U)) {
      ++free_count;
      free_size += (model >> j) & 1U;
    }
  }
  w.k = model_size(model);
  if (!(n > w.k + p0)) return w;  // not estimable (p > n): weight −inf
  w.bf = marginal_or_throw("bayesian_model_averaging_mcmc", prior, w.fit.log_one_minus_r_squared, n, w.k, p0, model);
  w.log_weight = log_prior_model_probability(model_prior, free_size, free_count) + w.bf.log_bayes_factor;
  w.estimable = true;
  return w;
}

}  // namespace

ModelEvaluation evaluate_model(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model,
                               const CoefficientPrior& prior, const ModelPrior& model_prior, ModelMask always_included,
                               int p0) {
  const int p = static_cast<int>(gram.rows() - 1);
  ModelEvaluation e;
  e.coefficients = Eigen::VectorXd::Zero(p);
  e.posterior_mean = Eigen::VectorXd::Zero(p);
  e.second_moment = Eigen::VectorXd::Zero(p);
  e.second_moment_bas = Eigen::VectorXd::Zero(p);
  const WeighedModel w = weigh_model(gram, n, model, prior, model_prior, always_included, p0);
  if (!w.estimable) return e;
  const GramModelFit& fit = w.fit;
  const BayesFactorResult& bf = w.bf;
  e.log_marginal = bf.log_bayes_factor;
  e.shrinkage = bf.shrinkage;
  e.r_squared = fit.r_squared;
  e.log_weight = w.log_weight;
  const MomentFactors mf = moment_factors(prior, bf, gram(p, p), fit.log_one_minus_r_squared, n, w.k, p0);
  const Eigen::VectorXd v = inverse_diagonal(gram, model_indices(model, p));
  e.intercept_variance = mf.intercept;
  e.intercept_variance_bas = mf.intercept_bas;
  for (int j = 0, c = 0; j < p; ++j) {
    if (!((model >> j) & 1U)) continue;
    const double beta = fit.coefficients(c);
    const double m = bf.shrinkage * beta;
    e.coefficients(j) = beta;
    e.posterior_mean(j) = m;
    e.second_moment(j) = m * m + mf.slope * v(c) + mf.between * beta * beta;
    e.second_moment_bas(j) = m * m + mf.slope_bas * v(c);
    ++c;
  }
  return e;
}

ModelWeight evaluate_model_weight(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model,
                                  const CoefficientPrior& prior, const ModelPrior& model_prior,
                                  ModelMask always_included, int p0) {
  ModelWeight out;
  const WeighedModel w = weigh_model(gram, n, model, prior, model_prior, always_included, p0);
  if (!w.estimable) return out;
  out.log_marginal = w.bf.log_bayes_factor;
  out.shrinkage = w.bf.shrinkage;
  out.r_squared = w.fit.r_squared;
  out.log_weight = w.log_weight;
  return out;
}

ModelMask median_probability_model(const Eigen::Ref<const Eigen::VectorXd>& pip) {
  ModelMask m = 0;
  for (Eigen::Index j = 0; j < pip.size() && j < 64; ++j) {
    if (pip(j) >= 0.5) m |= (1ULL << j);
  }
  return m;
}

}  // namespace dpmu::core
