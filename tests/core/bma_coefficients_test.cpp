// Posterior SDs, credible intervals, the intercept and the HPM/MPM/BPM coefficients of model
// averaging (docs/bma.md "Coefficients") against independent computations: the per-model
// posterior variance by adaptive numeric integration over g of the conditional Student t moments
// (written out here from the prior densities, not the library's quadrature), a Monte Carlo draw
// of (σ², β) for a fixed g, brute-force mixtures over all models, BAS's coef.bas formula from
// least-squares fits of the raw data, and the mixture CDF at the interval ends by quadrature.
// (R's BAS is not installable here, and tests/reference/bma_bas_reference.json holds no SDs, so
// BAS's SDs are checked through its formula, not its output.)
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/random.hpp"

using namespace dpmu::core;
using dpmu::test::centred_gram;
using dpmu::test::simulate;

namespace {

/// log π(g) written out from the definitions (Liang et al. 2008; Bayarri et al. 2012).
double log_prior_g(const Prior& prior, double g, double n, int k) {
  switch (prior.kind) {
    case PriorKind::zellner_siow:  // 1/g ~ Gamma(1/2, rate n/2)
      return 0.5 * std::log(n / 2.0) - std::lgamma(0.5) - 1.5 * std::log(g) - n / (2.0 * g);
    case PriorKind::hyper_g:
      return std::log((prior.a - 2.0) / 2.0) - 0.5 * prior.a * std::log1p(g);
    case PriorKind::hyper_g_n:
      return std::log((prior.a - 2.0) / (2.0 * n)) - 0.5 * prior.a * std::log1p(g / n);
    case PriorKind::robust: {  // a = 1/2, b = 1, ρ = 1/(k + 1): π(g) = ½ √(ρ(1+n)) (1+g)^{-3/2}, g > ρ(n+1) − 1
      const double rho = 1.0 / (k + 1.0);
      if (g <= rho * (n + 1.0) - 1.0) return -INFINITY;
      return std::log(0.5) + 0.5 * std::log(rho * (n + 1.0)) - 1.5 * std::log1p(g);
    }
    default:
      return 0.0;
  }
}

/// Where the g-posterior starts in t = log g: the robust prior's support starts at ρ(n+1) − 1 (a jump
/// in the integrand, so the quadrature must start there).
double lower_t(const Prior& prior, double n, int k) {
  return prior.kind == PriorKind::robust ? std::log((n + 1.0) / (k + 1.0) - 1.0) : -40.0;
}

struct Moments {
  double mean = 0.0;
  double var = 0.0;
};

/// E and Var of β_j | D, γ by Gauss–Kronrod in t = log g: the g-posterior ∝ (1+g)^{(n−1−k)/2}
/// (1+g(1−R²))^{−(n−1)/2} π(g) g, and β_j | g ~ t_{n−1}(sβ̂, s S(s)/(n−1) V_jj), S(s) = SST(1 − sR²).
Moments integrate_over_g(const Prior& prior, double n, int k, double r2, double sst, double beta, double vjj) {
  const auto log_post = [&](double t) {
    const double g = std::exp(t);
    return 0.5 * (n - 1 - k) * std::log1p(g) - 0.5 * (n - 1) * std::log1p(g * (1 - r2)) + log_prior_g(prior, g, n, k) +
           t;
  };
  double peak = -INFINITY;
  for (double t = -20; t < 40; t += 0.01) peak = std::max(peak, log_post(t));
  const auto integral = [&](auto&& f) {
    return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
        [&](double t) { return std::exp(log_post(t) - peak) * f(1.0 / (1.0 + std::exp(-t))); }, lower_t(prior, n, k),
        60.0, 15, 1e-14);
  };
  const double z = integral([](double) { return 1.0; });
  const double e_mean = integral([&](double s) { return s * beta; }) / z;
  const double e_sq = integral([&](double s) {
                        const double var = s * sst * (1 - s * r2) / (n - 3.0) * vjj;
                        return var + s * s * beta * beta;
                      }) /
                      z;
  return {e_mean, e_sq - e_mean * e_mean};
}

CoefficientPrior coefficient_prior(PriorKind kind) {
  CoefficientPrior cp;
  cp.prior.kind = kind;
  return cp;
}

}  // namespace

TEST_CASE("model_coefficient_posterior: SDs equal numeric integration over g to 1e-6 (mixture priors)",
          "[bma][coefficients]") {
  const int n = 40;
  const Eigen::MatrixXd d = simulate(n, 3, 11, {0.6, 0.0, 0.3});
  const Eigen::MatrixXd g = centred_gram(d);
  const ModelMask model = 0b101;
  for (PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n, PriorKind::robust}) {
    CAPTURE(to_string(kind));
    const CoefficientPrior cp = coefficient_prior(kind);
    const ModelCoefficientPosterior post = model_coefficient_posterior(g, n, model, cp);
    for (int j : {0, 2}) {
      const Moments m =
          integrate_over_g(cp.prior, n, 2, post.r_squared, g(3, 3), post.ols(j), post.inverse_gram_diagonal(j));
      CHECK(post.mean(j) == Approx(m.mean).epsilon(1e-7));
      CHECK(post.sd(j) == Approx(std::sqrt(m.var)).epsilon(1e-6));
    }
    CHECK(post.sd(1) == 0.0);
  }
}

TEST_CASE("model_coefficient_posterior: the fixed-g posterior variance matches a Monte Carlo draw of (sigma^2, beta)",
          "[bma][coefficients]") {
  const int n = 25;
  const Eigen::MatrixXd d = simulate(n, 2, 5, {0.8, -0.4});
  const Eigen::MatrixXd gram = centred_gram(d);
  CoefficientPrior cp = coefficient_prior(PriorKind::g_prior);
  cp.prior.g = 10.0;
  const ModelCoefficientPosterior post = model_coefficient_posterior(gram, n, 0b11, cp);
  // σ² | D ~ IG((n−1)/2, S/2), β | σ², D ~ N(sβ̂, sσ² V): draw and compare the variance of β_0 and α.
  const double s = 10.0 / 11.0;
  const double big_s = gram(2, 2) * (1.0 - s * post.r_squared);
  const Eigen::MatrixXd v = gram.topLeftCorner(2, 2).inverse();
  const Eigen::MatrixXd l = v.llt().matrixL();
  RngStream rng(99, 1, 0, StreamPurpose::data);
  const int draws = 200000;
  double sum = 0.0, sum_sq = 0.0, alpha_sq = 0.0;
  for (int i = 0; i < draws; ++i) {
    double chi = 0.0;
    for (int k = 0; k < n - 1; ++k) {
      const double z = standard_normal(rng);
      chi += z * z;
    }
    const double sigma2 = big_s / chi;
    const Eigen::Vector2d z(standard_normal(rng), standard_normal(rng));
    const double b0 = s * post.ols(0) + std::sqrt(s * sigma2) * (l * z)(0);
    const double a = std::sqrt(sigma2 / n) * standard_normal(rng);
    sum += b0;
    sum_sq += b0 * b0;
    alpha_sq += a * a;
  }
  const double mean = sum / draws;
  const double var = sum_sq / draws - mean * mean;
  const double sd2 = post.sd(0) * post.sd(0);
  // SE of a sample variance ≈ var·sqrt((κ − 1)/N), κ ≤ 4 for these t tails: 5 SE
  CHECK(std::abs(var - sd2) < 5.0 * sd2 * std::sqrt(3.0 / draws));
  CHECK(std::abs(mean - post.mean(0)) < 5.0 * post.sd(0) / std::sqrt(draws));
  const double isd2 = post.intercept_sd * post.intercept_sd;
  CHECK(std::abs(alpha_sq / draws - isd2) < 5.0 * isd2 * std::sqrt(3.0 / draws));
}

TEST_CASE("bayesian_model_averaging: SDs, intercept and BAS SDs equal the brute-force mixture over all models",
          "[bma][coefficients]") {
  const int n = 50;
  const int p = 4;
  const Eigen::MatrixXd d = simulate(n, p, 21, {0.5, 0.0, 0.25, 0.0});
  const Eigen::MatrixXd g = centred_gram(d);
  for (PriorKind kind :
       {PriorKind::g_prior, PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::bic, PriorKind::aic}) {
    CAPTURE(to_string(kind));
    const CoefficientPrior cp = coefficient_prior(kind);
    const ModelPrior mp;
    const BmaResult r = bayesian_model_averaging(g, n, cp, mp);
    Eigen::VectorXd m1 = Eigen::VectorXd::Zero(p), m2 = Eigen::VectorXd::Zero(p), m2_bas = Eigen::VectorXd::Zero(p);
    double iv = 0.0, iv_bas = 0.0;
    // BAS's formula from least squares on the raw data: mse = RSS/(n − 1 − k), se² = mse·[(X'X)^{-1}]_jj
    Eigen::VectorXd b1 = Eigen::VectorXd::Zero(p), b2 = Eigen::VectorXd::Zero(p);
    for (ModelMask m = 0; m < (1U << p); ++m) {
      const double w = std::exp(r.log_posterior_probability(static_cast<Eigen::Index>(m)));
      const ModelCoefficientPosterior post = model_coefficient_posterior(g, n, m, cp);
      m1 += w * post.mean;
      m2 += w * (post.mean.array().square() + post.sd.array().square()).matrix();
      m2_bas += w * (post.mean.array().square() + post.sd_bas.array().square()).matrix();
      iv += w * post.intercept_sd * post.intercept_sd;
      iv_bas += w * post.intercept_sd_bas * post.intercept_sd_bas;
      const int k = model_size(m);
      Eigen::MatrixXd x(n, k + 1);
      x.col(0).setOnes();
      for (int j = 0, c = 1; j < p; ++j) {
        if ((m >> j) & 1U) x.col(c++) = d.col(j).array() - d.col(j).mean();
      }
      const Eigen::VectorXd y = d.col(p);
      const Eigen::VectorXd coef = x.colPivHouseholderQr().solve(y);
      const double mse = (y - x * coef).squaredNorm() / (n - 1 - k);
      const Eigen::MatrixXd xtx_inv = (x.transpose() * x).inverse();
      const bool ic = kind == PriorKind::bic || kind == PriorKind::aic;
      for (int j = 0, c = 1; j < p; ++j) {
        if (!((m >> j) & 1U)) continue;
        const double sbar = ic ? 1.0 : post.mean(j) / post.ols(j);  // E[s | D, γ]
        const double mean = sbar * coef(c);
        const double sd2 = sbar * mse * xtx_inv(c, c);
        b1(j) += w * mean;
        b2(j) += w * (mean * mean + sd2);
        ++c;
      }
      CHECK(post.intercept_sd_bas == Approx(std::sqrt(mse * xtx_inv(0, 0))).epsilon(1e-10));
      CHECK(coef(0) == Approx(d.col(p).mean()).epsilon(1e-12));  // the intercept is ȳ in every model
    }
    CHECK((r.model_averaged_coefficients - m1).cwiseAbs().maxCoeff() < 1e-12);
    for (int j = 0; j < p; ++j) {
      CHECK(r.posterior_sd(j) == Approx(std::sqrt(m2(j) - m1(j) * m1(j))).epsilon(1e-9));
      CHECK(r.posterior_sd_bas(j) == Approx(std::sqrt(m2_bas(j) - m1(j) * m1(j))).epsilon(1e-9));
      CHECK(r.posterior_sd_bas(j) == Approx(std::sqrt(b2(j) - b1(j) * b1(j))).epsilon(1e-8));
    }
    CHECK(r.intercept_sd == Approx(std::sqrt(iv)).epsilon(1e-10));
    CHECK(r.intercept_sd_bas == Approx(std::sqrt(iv_bas)).epsilon(1e-10));
  }
}

TEST_CASE("bayesian_model_averaging: credible interval ends are the (1 -/+ level)/2 quantiles of the mixture",
          "[bma][coefficients]") {
  const int n = 40;
  const int p = 3;
  const Eigen::MatrixXd d = simulate(n, p, 8, {0.5, 0.1, 0.0});
  const Eigen::MatrixXd g = centred_gram(d);
  for (PriorKind kind : {PriorKind::g_prior, PriorKind::hyper_g, PriorKind::bic}) {
    CAPTURE(to_string(kind));
    const CoefficientPrior cp = coefficient_prior(kind);
    BmaOptions opt;
    opt.credible_level = 0.9;
    const BmaResult r = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt);
    REQUIRE(r.credible_intervals.level == 0.9);
    const double omitted = r.credible_intervals.omitted_mass;
    CHECK(omitted < 1e-6);
    // The mixture CDF at x, independently: point masses and per-model t CDFs integrated over g.
    const auto cdf = [&](int j, double x) {
      double f = 0.0;
      for (ModelMask m = 0; m < (1U << p); ++m) {
        const double w = std::exp(r.log_posterior_probability(static_cast<Eigen::Index>(m)));
        if (!((m >> j) & 1U)) {
          f += w * (x >= 0.0 ? 1.0 : 0.0);
          continue;
        }
        const ModelCoefficientPosterior post = model_coefficient_posterior(g, n, m, cp);
        const double r2 = post.r_squared, beta = post.ols(j), v = post.inverse_gram_diagonal(j), sst = g(p, p);
        const int k = model_size(m);
        if (kind == PriorKind::bic) {
          const boost::math::students_t_distribution<double> t(n - 1.0 - k);
          f += w * boost::math::cdf(t, (x - beta) / std::sqrt(sst * (1 - r2) / (n - 1.0 - k) * v));
          continue;
        }
        const boost::math::students_t_distribution<double> t(n - 1.0);
        const auto conditional = [&](double s) {
          return boost::math::cdf(t, (x - s * beta) / std::sqrt(s * sst * (1 - s * r2) / (n - 1.0) * v));
        };
        if (kind == PriorKind::g_prior) {
          f += w * conditional(n / (1.0 + n));
          continue;
        }
        const auto log_post = [&](double tt) {
          const double gg = std::exp(tt);
          return 0.5 * (n - 1 - k) * std::log1p(gg) - 0.5 * (n - 1) * std::log1p(gg * (1 - r2)) +
                 log_prior_g(cp.prior, gg, n, k) + tt;
        };
        const auto integral = [&](auto&& h) {
          return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
              [&](double tt) { return std::exp(log_post(tt)) * h(1.0 / (1.0 + std::exp(-tt))); }, -40.0, 60.0, 15,
              1e-13);
        };
        f += w * integral(conditional) / integral([](double) { return 1.0; });
      }
      return f;
    };
    for (int j = 0; j < p; ++j) {
      CAPTURE(j);
      const double lo = r.credible_intervals.lower(j);
      const double hi = r.credible_intervals.upper(j);
      CHECK(lo < hi);
      if (lo != 0.0) CHECK(cdf(j, lo) == Approx(0.05).margin(1e-8 + omitted));
      if (hi != 0.0) CHECK(cdf(j, hi) == Approx(0.95).margin(1e-8 + omitted));
      if (lo == 0.0 || hi == 0.0) {  // the quantile is in the jump at 0
        CHECK(cdf(j, -1e-12) <= (lo == 0.0 ? 0.05 : 0.95) + 1e-9);
        CHECK(cdf(j, 0.0) >= (lo == 0.0 ? 0.05 : 0.95) - 1e-9);
      }
    }
  }
}

TEST_CASE("bayesian_model_averaging: HPM, MPM and BPM coefficients are those models' posterior means",
          "[bma][coefficients]") {
  const int n = 60;
  const int p = 4;
  const Eigen::MatrixXd d = simulate(n, p, 3, {0.4, 0.0, 0.2, 0.05});
  const Eigen::MatrixXd g = centred_gram(d);
  const CoefficientPrior cp = coefficient_prior(PriorKind::zellner_siow);
  const BmaResult r = bayesian_model_averaging(g, n, cp, ModelPrior{});
  CHECK((r.highest_posterior_model_coefficients - model_coefficient_posterior(g, n, r.highest_posterior_model, cp).mean)
            .cwiseAbs()
            .maxCoeff() == 0.0);
  CHECK(
      (r.median_probability_model_coefficients - model_coefficient_posterior(g, n, r.median_probability_model, cp).mean)
          .cwiseAbs()
          .maxCoeff() == 0.0);
  // BPM: brute force over all models of the distance of the fits to the BMA fit on the data
  double best = INFINITY;
  ModelMask arg = 0;
  for (ModelMask m = 0; m < (1U << p); ++m) {
    const Eigen::VectorXd diff = model_coefficient_posterior(g, n, m, cp).mean - r.model_averaged_coefficients;
    const double dist = diff.dot(g.topLeftCorner(p, p) * diff);
    if (dist < best) {
      best = dist;
      arg = m;
    }
  }
  CHECK(r.best_predictive_model == arg);
}

TEST_CASE("bayesian_model_averaging_mcmc: SDs and intervals agree with enumeration within the MC error",
          "[bma][coefficients]") {
  const int n = 80;
  const int p = 5;
  const Eigen::MatrixXd d = simulate(n, p, 31, {0.4, 0.0, 0.2, 0.0, 0.1});
  const Eigen::MatrixXd g = centred_gram(d);
  const CoefficientPrior cp = coefficient_prior(PriorKind::hyper_g);
  const BmaResult e = bayesian_model_averaging(g, n, cp, ModelPrior{});
  RngStream rng(5, 3, 0, StreamPurpose::noise);
  McmcOptions mo;
  mo.min_iterations = 200000;
  mo.max_iterations = 200000;
  const BmaResult m = bayesian_model_averaging_mcmc(g, n, cp, ModelPrior{}, rng, mo);
  for (int j = 0; j < p; ++j) {
    // PIP error ~ sqrt(pip(1-pip)·τ/N) with an autocorrelation time τ ≲ 20: coefficient moments scale alike
    const double tol = 0.02 * std::max(1.0, std::abs(e.model_averaged_coefficients(j)) + e.posterior_sd(j));
    CHECK(m.posterior_sd(j) == Approx(e.posterior_sd(j)).margin(tol));
    CHECK(m.credible_intervals.lower(j) == Approx(e.credible_intervals.lower(j)).margin(2 * tol));
    CHECK(m.credible_intervals.upper(j) == Approx(e.credible_intervals.upper(j)).margin(2 * tol));
  }
  CHECK(m.intercept_sd == Approx(e.intercept_sd).epsilon(1e-3));
}

TEST_CASE("bayesian_model_averaging_mcmc: p > n samples only estimable models", "[bma][coefficients]") {
  const int n = 8;
  const int p = 12;
  const Eigen::MatrixXd d = simulate(n, p, 17, {1.0, 0.5});
  const Eigen::MatrixXd g = centred_gram(d);
  RngStream rng(1, 1, 0, StreamPurpose::noise);
  McmcOptions mo;
  mo.max_iterations = 20000;
  mo.min_iterations = 20000;
  mo.credible_level = 0.0;  // estimability only (intervals over thousands of visited models take seconds)
  const BmaResult r =
      bayesian_model_averaging_mcmc(g, n, coefficient_prior(PriorKind::zellner_siow), ModelPrior{}, rng, mo);
  for (const ModelSummary& s : r.top_models) CHECK(s.model_size + 1 < n);
  CHECK(r.posterior_inclusion_probability.allFinite());
  CHECK(r.posterior_sd.allFinite());
}

TEST_CASE("prior_inclusion_probabilities: one value per model prior, 1 when forced", "[bma][coefficients]") {
  ModelPrior mp;
  mp.kind = ModelPriorKind::beta_binomial;
  mp.a = 1;
  mp.b = 3;
  CHECK(prior_inclusion_probabilities(mp, 0b10, 3)(0) == Approx(0.25));
  CHECK(prior_inclusion_probabilities(mp, 0b10, 3)(1) == 1.0);
  mp.kind = ModelPriorKind::bernoulli;
  mp.w = 0.2;
  CHECK(prior_inclusion_probabilities(mp, 0, 2)(1) == Approx(0.2));
  mp.kind = ModelPriorKind::uniform;
  CHECK(prior_inclusion_probabilities(mp, 0, 2)(0) == 0.5);
}
