// Noise-aware model averaging from a released Gram matrix (noise_aware.hpp; docs/methods.md §5.11).

#include "dpmu/core/noise_aware.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace dpmu::core {

Eigen::VectorXd gram_diagonal_bounds(double n, const Eigen::Ref<const Eigen::VectorXd>& widths) {
  constexpr const char* fn = "gram_diagonal_bounds";
  check_positive_finite(fn, "n", n);
  for (Eigen::Index j = 0; j < widths.size(); ++j) check_positive_finite(fn, "width", widths(j));
  return (n / 4.0) * widths.array().square().matrix();
}

bool admissible_gram(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                     const Eigen::Ref<const Eigen::VectorXd>& max_diagonal) {
  const Eigen::Index d = gram.rows();
  if (gram.cols() != d || max_diagonal.size() != d) {
    throw_invalid("admissible_gram", "gram must be square with one diagonal bound per row");
  }
  for (Eigen::Index j = 0; j < d; ++j) {
    const double gjj = gram(j, j);
    if (!(gjj >= 0.0 && gjj <= max_diagonal(j))) return false;  // NaN fails too
    for (Eigen::Index i = j + 1; i < d; ++i) {
      if (!(std::abs(gram(i, j)) <= std::sqrt(max_diagonal(i) * max_diagonal(j)))) return false;
    }
  }
  Eigen::LLT<Eigen::MatrixXd, Eigen::Lower> llt(gram);
  return llt.info() == Eigen::Success;
}

namespace {

/// E[β | D_m, γ] and P_m(γ) of one model in draw m, from the draw's log normaliser.
struct DrawModel {
  double probability = 0.0;
  Eigen::VectorXd mean;
};

}  // namespace

BmaResult mix_bma_draws(const std::vector<Eigen::MatrixXd>& grams, double n, const CoefficientPrior& prior,
                        const ModelPrior& model_prior, const NoiseAwareOptions& options, NoiseAwareResult* details) {
  constexpr const char* fn = "mix_bma_draws";
  if (grams.empty()) throw_invalid(fn, "no Gram matrices to mix");
  const Eigen::Index d = grams.front().rows();
  const int p = static_cast<int>(d - 1);
  if (p < 1 || p > 24) throw_invalid(fn, "p = " + std::to_string(p) + " must be in [1, 24] (full enumeration)");
  for (const auto& g : grams) {
    if (g.rows() != d || g.cols() != d) throw_invalid(fn, "the Gram matrices differ in shape");
  }
  if (options.draw_interval_max_models < 1) {
    throw_domain(fn, "draw_interval_max_models", options.draw_interval_max_models, ">= 1");
  }
  const BmaOptions& bo = options.bma;
  const double level = bo.credible_level;
  if (level != 0.0) check_open_interval(fn, "credible_level", level, 0.0, 1.0);
  for (const double l : options.extra_levels) check_open_interval(fn, "extra level", l, 0.0, 1.0);
  const bool intervals = level != 0.0 || (details != nullptr && !options.extra_levels.empty());
  BmaOptions per = bo;
  per.keep_all_models = true;
  per.credible_level = 0.0;
  per.interval_max_models = 0;
  per.top_models = 0;
  const double m_draws = static_cast<double>(grams.size());
  const double share = 1.0 / m_draws;
  const std::size_t models_total = std::size_t{1} << p;

  Eigen::VectorXd pip_sum = Eigen::VectorXd::Zero(p), pip_sq = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd mean_sum = Eigen::VectorXd::Zero(p), mean_sq = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd second = Eigen::VectorXd::Zero(p), second_bas = Eigen::VectorXd::Zero(p);
  double intercept_var = 0.0, intercept_var_bas = 0.0;
  Eigen::ArrayXd prob_sum = Eigen::ArrayXd::Zero(static_cast<Eigen::Index>(models_total));
  Eigen::MatrixXd gram_mean = Eigen::MatrixXd::Zero(d, d);
  std::vector<double> log_z(grams.size());  // log normaliser of each draw's model weights
  CoefficientMixture mix(p);
  std::uint64_t interval_models = 0;
  BmaResult res;
  res.p = p;
  std::vector<std::size_t> order(models_total);
  for (std::size_t m = 0; m < grams.size(); ++m) {
    report_progress(options.progress, m, grams.size(), "noise-aware-draws");
    const Eigen::MatrixXd g = 0.5 * (grams[m] + grams[m].transpose());
    gram_mean += g * share;
    const BmaResult r = bayesian_model_averaging(g, n, prior, model_prior, per);
    if (m == 0) res.prior_inclusion_probability = r.prior_inclusion_probability;
    pip_sum += r.posterior_inclusion_probability;
    pip_sq += r.posterior_inclusion_probability.array().square().matrix();
    mean_sum += r.model_averaged_coefficients;
    mean_sq += r.model_averaged_coefficients.array().square().matrix();
    second += (r.posterior_sd.array().square() + r.model_averaged_coefficients.array().square()).matrix();
    second_bas += (r.posterior_sd_bas.array().square() + r.model_averaged_coefficients.array().square()).matrix();
    intercept_var += r.intercept_sd * r.intercept_sd;
    intercept_var_bas += r.intercept_sd_bas * r.intercept_sd_bas;
    res.models_evaluated += r.models_evaluated;
    res.models_rank_deficient += r.models_rank_deficient;
    res.models_heredity_excluded += r.models_heredity_excluded;
    res.models_exact_fit += r.models_exact_fit;
    res.models_negligible += r.models_negligible;
    const Eigen::ArrayXd prob = r.log_posterior_probability.array().exp();
    prob_sum += prob;
    {
      const ModelEvaluation e =
          evaluate_model(g, n, r.highest_posterior_model, prior, model_prior, bo.always_included, bo.p0);
      log_z[m] = e.log_weight - r.log_posterior_probability(static_cast<Eigen::Index>(r.highest_posterior_model));
    }
    if (!intervals) continue;
    // The most probable models of this draw enter the intervals' mixture with weight P_m(γ)/M.
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto take = std::min<std::size_t>(models_total, static_cast<std::size_t>(options.draw_interval_max_models));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                      [&](std::size_t a, std::size_t b) {
                        const double pa = prob(static_cast<Eigen::Index>(a));
                        const double pb = prob(static_cast<Eigen::Index>(b));
                        return pa != pb ? pa > pb : a < b;
                      });
    double kept = 0.0;
    for (std::size_t i = 0; i < take && kept < options.draw_interval_mass; ++i) {
      const double pr = prob(static_cast<Eigen::Index>(order[i]));
      if (!(pr > 0.0)) break;
      const ModelCoefficientPosterior post =
          model_coefficient_posterior(g, n, static_cast<ModelMask>(order[i]), prior, bo.p0);
      add_model_components(post, g(p, p), n, prior, pr * share, mix);
      kept += pr;
      ++interval_models;
    }
    mix.omitted_mass += std::max(0.0, 1.0 - kept) * share;
  }

  res.posterior_inclusion_probability = pip_sum * share;
  res.model_averaged_coefficients = mean_sum * share;
  const Eigen::ArrayXd mean2 = res.model_averaged_coefficients.array().square();
  res.posterior_sd = (second.array() * share - mean2).max(0.0).sqrt().matrix();
  res.posterior_sd_bas = (second_bas.array() * share - mean2).max(0.0).sqrt().matrix();
  res.intercept_sd = std::sqrt(intercept_var * share);
  res.intercept_sd_bas = std::sqrt(intercept_var_bas * share);
  res.expected_model_size = res.posterior_inclusion_probability.sum();
  res.median_probability_model = median_probability_model(res.posterior_inclusion_probability);
  const Eigen::ArrayXd prob_avg = prob_sum * share;
  Eigen::Index hpm = 0;
  prob_avg.maxCoeff(&hpm);
  res.highest_posterior_model = static_cast<ModelMask>(hpm);
  if (bo.keep_all_models) res.log_posterior_probability = prob_avg.log().matrix();

  // E[β | D*, γ] = Σ_m P_m(γ) E_m[β | γ] / Σ_m P_m(γ) (NaN when no draw gives γ weight).
  const auto model_coefficients = [&](ModelMask model) {
    Eigen::VectorXd acc = Eigen::VectorXd::Zero(p);
    double weight = 0.0;
    for (std::size_t m = 0; m < grams.size(); ++m) {
      const Eigen::MatrixXd g = 0.5 * (grams[m] + grams[m].transpose());
      const ModelEvaluation e = evaluate_model(g, n, model, prior, model_prior, bo.always_included, bo.p0);
      if (!std::isfinite(e.log_weight)) continue;
      const double w = std::exp(e.log_weight - log_z[m]);
      acc += w * e.posterior_mean;
      weight += w;
    }
    if (!(weight > 0.0)) return Eigen::VectorXd::Constant(p, std::numeric_limits<double>::quiet_NaN()).eval();
    return (acc / weight).eval();
  };
  res.highest_posterior_model_coefficients = model_coefficients(res.highest_posterior_model);
  res.median_probability_model_coefficients = model_coefficients(res.median_probability_model);

  // Top models by averaged probability; their log marginal, R² and shrinkage at the mean draw Ḡ.
  std::vector<std::size_t> top(models_total);
  std::iota(top.begin(), top.end(), std::size_t{0});
  const auto k = std::min<std::size_t>(models_total, static_cast<std::size_t>(std::max(bo.top_models, 0)));
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(k), top.end(),
                    [&](std::size_t a, std::size_t b) {
                      const double pa = prob_avg(static_cast<Eigen::Index>(a));
                      const double pb = prob_avg(static_cast<Eigen::Index>(b));
                      return pa != pb ? pa > pb : a < b;
                    });
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<ModelMask> candidates = {res.highest_posterior_model, res.median_probability_model};
  for (std::size_t i = 0; i < k; ++i) {
    const double pr = prob_avg(static_cast<Eigen::Index>(top[i]));
    if (!(pr > 0.0)) break;
    const auto model = static_cast<ModelMask>(top[i]);
    const ModelEvaluation e = evaluate_model(gram_mean, n, model, prior, model_prior, bo.always_included, bo.p0);
    ModelSummary s;
    s.model = model;
    s.model_size = model_size(model);
    s.log_posterior_probability = std::log(pr);
    s.posterior_probability = pr;
    const bool ok = std::isfinite(e.log_weight);
    s.log_marginal = ok ? e.log_marginal : kNaN;
    s.log_prior_probability = ok ? e.log_weight - e.log_marginal : kNaN;
    s.r_squared = ok ? e.r_squared : kNaN;
    s.shrinkage = ok ? e.shrinkage : kNaN;
    res.top_models.push_back(s);
    if (model != res.highest_posterior_model && model != res.median_probability_model) candidates.push_back(model);
  }
  // Best predictive model among the candidates, with the averaged G_xx.
  const Eigen::MatrixXd gxx = gram_mean.topLeftCorner(p, p);
  res.best_predictive_model = res.highest_posterior_model;
  res.best_predictive_model_coefficients = res.highest_posterior_model_coefficients;
  double best = INFINITY;
  for (const ModelMask model : candidates) {
    const Eigen::VectorXd c = model == res.highest_posterior_model    ? res.highest_posterior_model_coefficients
                              : model == res.median_probability_model ? res.median_probability_model_coefficients
                                                                      : model_coefficients(model);
    if (!c.allFinite()) continue;
    const Eigen::VectorXd diff = c - res.model_averaged_coefficients;
    const double dist = diff.dot(gxx * diff);
    if (dist < best) {
      best = dist;
      res.best_predictive_model = model;
      res.best_predictive_model_coefficients = c;
    }
  }
  // The intervals at `level` (if any) and at the extra levels, each coefficient's mixture built once.
  std::vector<double> levels;
  if (level != 0.0) levels.push_back(level);
  if (details != nullptr) levels.insert(levels.end(), options.extra_levels.begin(), options.extra_levels.end());
  std::vector<CredibleIntervals> all = mixture_credible_intervals(mix, levels);
  for (CredibleIntervals& ci : all) ci.models = interval_models;
  if (level != 0.0) res.credible_intervals = std::move(all.front());
  if (details != nullptr) {
    details->extra_intervals.assign(std::make_move_iterator(all.begin() + (level != 0.0 ? 1 : 0)),
                                    std::make_move_iterator(all.end()));
    if (grams.size() < 2) {
      details->pip_mc_se = Eigen::VectorXd::Constant(p, kNaN);
      details->mean_mc_se = Eigen::VectorXd::Constant(p, kNaN);
    } else {
      const double c = m_draws / (m_draws - 1.0) / m_draws;  // unbiased variance / M
      const auto se = [&](const Eigen::VectorXd& sum, const Eigen::VectorXd& sq) {
        return ((sq.array() * share - (sum.array() * share).square()).max(0.0) * c).sqrt().matrix().eval();
      };
      details->pip_mc_se = se(pip_sum, pip_sq);
      details->mean_mc_se = se(mean_sum, mean_sq);
    }
  }
  return res;
}

}  // namespace dpmu::core
