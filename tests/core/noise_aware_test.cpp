// Noise-aware model averaging (core/noise_aware.hpp; docs/methods.md §5.11) against independent
// values: the admissible set against hand-built matrices and Popoviciu's extreme data set; the
// mixture of one draw against the plug-in analysis (a property over data sets and priors); the
// mixture of two draws against averages of two separate analyses and the mixture CDF at the
// interval ends written out with Boost's Student t; the zero-noise limit; interval widths on a
// fixed release; and the Monte Carlo standard errors against two independent runs.
#include "dpmu/core/noise_aware.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;
using dpmu::test::centred_gram;
using dpmu::test::simulate;

namespace {

CoefficientPrior coefficient_prior(PriorKind kind) {
  CoefficientPrior cp;
  cp.prior.kind = kind;
  return cp;
}

/// n rows in the unit box: x_j ~ U(0, 1), y = clamp(0.5 + Σ b_j (x_j − 0.5) + σ z, 0, 1).
Eigen::MatrixXd unit_box_data(int n, const std::vector<double>& beta, double sigma, std::uint64_t seed) {
  RngStream rng(seed, 1, 0, StreamPurpose::data);
  const int p = static_cast<int>(beta.size());
  Eigen::MatrixXd d(n, p + 1);
  for (int i = 0; i < n; ++i) {
    double y = 0.5 + sigma * standard_normal(rng);
    for (int j = 0; j < p; ++j) {
      d(i, j) = uniform_open01(rng);
      y += beta[static_cast<std::size_t>(j)] * (d(i, j) - 0.5);
    }
    d(i, p) = std::clamp(y, 0.0, 1.0);
  }
  return d;
}

/// The Laplace mechanism of an SSP release of unit-width columns (release.hpp: Δ1 = ((n−1)/n)(p+1)(p+2)/2).
SspMechanism unit_laplace(int p, double n, double epsilon) {
  SspMechanism m;
  m.kind = SspMechanismKind::laplace;
  m.p = p;
  m.epsilon = epsilon;
  m.noise_l1_sensitivity = (n - 1.0) / n * (p + 1.0) * (p + 2.0) / 2.0;
  return m;
}

}  // namespace

TEST_CASE("gram_diagonal_bounds: n w^2/4, attained by half the rows at each end", "[noise_aware]") {
  const Eigen::Vector3d w(1.0, 2.0, 0.5);
  const Eigen::VectorXd b = gram_diagonal_bounds(10.0, w);
  CHECK(b(0) == Approx(2.5));
  CHECK(b(1) == Approx(10.0));
  CHECK(b(2) == Approx(0.625));
  // 10 rows, half at the lower end and half at the upper end of each column: the bound exactly.
  Eigen::MatrixXd d(10, 3);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 3; ++j) d(i, j) = (i % 2 == 0) ? 0.0 : w(j);
  const Eigen::MatrixXd g = centred_gram(d);
  for (int j = 0; j < 3; ++j) CHECK(g(j, j) == Approx(b(j)).epsilon(1e-14));
  // and no data set in the box exceeds it
  RngStream rng(3, 0, 0, StreamPurpose::data);
  for (int rep = 0; rep < 200; ++rep) {
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 3; ++j) d(i, j) = w(j) * (uniform_open01(rng) < 0.5 ? 0.0 : uniform_open01(rng));
    const Eigen::MatrixXd gg = centred_gram(d);
    for (int j = 0; j < 3; ++j) CHECK(gg(j, j) <= b(j) * (1 + 1e-14));
  }
  CHECK_THROWS_AS(gram_diagonal_bounds(0.0, w), std::domain_error);
  CHECK_THROWS_AS(gram_diagonal_bounds(10.0, Eigen::Vector2d(1.0, 0.0)), std::domain_error);
}

TEST_CASE("admissible_gram: positive definite, diagonal and off-diagonal within the bounds", "[noise_aware]") {
  const Eigen::Vector2d bound(4.0, 9.0);
  Eigen::Matrix2d g;
  g << 2.0, 1.0, 1.0, 3.0;
  CHECK(admissible_gram(g, bound));
  Eigen::Matrix2d over = g;
  over(1, 1) = 9.5;  // diagonal above its bound
  CHECK_FALSE(admissible_gram(over, bound));
  Eigen::Matrix2d negative = g;
  negative(0, 0) = -0.1;
  CHECK_FALSE(admissible_gram(negative, bound));
  Eigen::Matrix2d indefinite = g;  // det = 6 − 9 < 0
  indefinite(1, 0) = indefinite(0, 1) = 3.0;
  CHECK_FALSE(admissible_gram(indefinite, bound));
  // off-diagonal above sqrt(4·9) = 6 (then never PD with these diagonals: the PD check agrees)
  Eigen::Matrix2d big;
  big << 4.0, 6.5, 6.5, 9.0;
  CHECK_FALSE(admissible_gram(big, bound));
  Eigen::Matrix2d nan = g;
  nan(0, 0) = std::nan("");
  CHECK_FALSE(admissible_gram(nan, bound));
  CHECK_THROWS_AS(admissible_gram(g, Eigen::Vector3d::Ones()), std::invalid_argument);
  // the Gram matrix of data in the box is admissible
  const Eigen::MatrixXd d = unit_box_data(50, {0.3, 0.0}, 0.2, 7);
  CHECK(admissible_gram(centred_gram(d), gram_diagonal_bounds(50.0, Eigen::Vector3d::Ones())));
}

TEST_CASE("mix_bma_draws: the mixture of one draw is the plug-in analysis of that draw (property)", "[noise_aware]") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (PriorKind kind : {PriorKind::g_prior, PriorKind::zellner_siow, PriorKind::bic}) {
      CAPTURE(seed, to_string(kind));
      const int n = 30 + 10 * static_cast<int>(seed);
      const int p = 2 + static_cast<int>(seed % 3);
      const Eigen::MatrixXd g = centred_gram(simulate(n, p, seed, {0.6, 0.0, 0.25}));
      const CoefficientPrior cp = coefficient_prior(kind);
      NoiseAwareOptions opt;
      opt.bma.credible_level = 0.8;
      opt.draw_interval_mass = opt.bma.interval_mass;  // the plug-in's interval options
      opt.draw_interval_max_models = opt.bma.interval_max_models;
      opt.extra_levels = {0.5};
      const BmaResult plug = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt.bma);
      NoiseAwareResult details;
      const BmaResult mixed = mix_bma_draws({g}, n, cp, ModelPrior{}, opt, &details);
      BmaOptions half = opt.bma;
      half.credible_level = 0.5;
      const BmaResult plug_half = bayesian_model_averaging(g, n, cp, ModelPrior{}, half);
      REQUIRE(details.extra_intervals.size() == 1);
      CHECK(std::isnan(details.pip_mc_se(0)));  // no MC error from one draw
      for (int j = 0; j < p; ++j) {
        CHECK(mixed.posterior_inclusion_probability(j) ==
              Approx(plug.posterior_inclusion_probability(j)).margin(1e-13));
        CHECK(mixed.model_averaged_coefficients(j) == Approx(plug.model_averaged_coefficients(j)).epsilon(1e-12));
        CHECK(mixed.posterior_sd(j) == Approx(plug.posterior_sd(j)).epsilon(1e-9));
        CHECK(mixed.posterior_sd_bas(j) == Approx(plug.posterior_sd_bas(j)).epsilon(1e-9));
        CHECK(mixed.credible_intervals.lower(j) == Approx(plug.credible_intervals.lower(j)).epsilon(1e-10));
        CHECK(mixed.credible_intervals.upper(j) == Approx(plug.credible_intervals.upper(j)).epsilon(1e-10));
        CHECK(details.extra_intervals[0].lower(j) == Approx(plug_half.credible_intervals.lower(j)).epsilon(1e-10));
        CHECK(details.extra_intervals[0].upper(j) == Approx(plug_half.credible_intervals.upper(j)).epsilon(1e-10));
        CHECK(mixed.highest_posterior_model_coefficients(j) ==
              Approx(plug.highest_posterior_model_coefficients(j)).epsilon(1e-10));
      }
      CHECK(mixed.intercept_sd == Approx(plug.intercept_sd).epsilon(1e-12));
      CHECK(mixed.credible_intervals.omitted_mass == Approx(plug.credible_intervals.omitted_mass).margin(1e-15));
      CHECK(mixed.highest_posterior_model == plug.highest_posterior_model);
      CHECK(mixed.median_probability_model == plug.median_probability_model);
      for (Eigen::Index m = 0; m < plug.log_posterior_probability.size(); ++m) {
        CHECK(std::exp(mixed.log_posterior_probability(m)) ==
              Approx(std::exp(plug.log_posterior_probability(m))).margin(1e-13));
      }
      REQUIRE(!mixed.top_models.empty());
      CHECK(mixed.top_models.front().model == plug.top_models.front().model);
      CHECK(mixed.top_models.front().log_marginal == Approx(plug.top_models.front().log_marginal).epsilon(1e-10));
    }
  }
}

TEST_CASE("mix_bma_draws: two draws average the probabilities and moments, and pool the interval mixture",
          "[noise_aware]") {
  const int n = 60;
  const int p = 3;
  const Eigen::MatrixXd g1 = centred_gram(simulate(n, p, 11, {0.5, 0.0, 0.2}));
  const Eigen::MatrixXd g2 = centred_gram(simulate(n, p, 12, {0.1, 0.3, 0.0}));
  const CoefficientPrior cp = coefficient_prior(PriorKind::g_prior);
  NoiseAwareOptions opt;
  opt.bma.credible_level = 0.9;
  opt.draw_interval_mass = 1.0;
  opt.draw_interval_max_models = 8;  // every model
  NoiseAwareResult se;
  const BmaResult mixed = mix_bma_draws({g1, g2}, n, cp, ModelPrior{}, opt, &se);
  const BmaResult a = bayesian_model_averaging(g1, n, cp, ModelPrior{}, opt.bma);
  const BmaResult b = bayesian_model_averaging(g2, n, cp, ModelPrior{}, opt.bma);
  for (int j = 0; j < p; ++j) {
    CAPTURE(j);
    const double pip = 0.5 * (a.posterior_inclusion_probability(j) + b.posterior_inclusion_probability(j));
    CHECK(mixed.posterior_inclusion_probability(j) == Approx(pip).margin(1e-13));
    const double mean = 0.5 * (a.model_averaged_coefficients(j) + b.model_averaged_coefficients(j));
    CHECK(mixed.model_averaged_coefficients(j) == Approx(mean).epsilon(1e-12));
    const double second =
        0.5 *
        (a.posterior_sd(j) * a.posterior_sd(j) + a.model_averaged_coefficients(j) * a.model_averaged_coefficients(j) +
         b.posterior_sd(j) * b.posterior_sd(j) + b.model_averaged_coefficients(j) * b.model_averaged_coefficients(j));
    CHECK(mixed.posterior_sd(j) == Approx(std::sqrt(second - mean * mean)).epsilon(1e-10));
    // MC SE with M = 2: |x1 − x2|/2 (the unbiased SD |x1 − x2|/√2, over √2)
    CHECK(se.pip_mc_se(j) ==
          Approx(0.5 * std::abs(a.posterior_inclusion_probability(j) - b.posterior_inclusion_probability(j)))
              .margin(1e-12));
    // The pooled CDF at the interval ends, written out: ½ Σ_draws Σ_γ P(γ) [1(x ≥ 0) or t CDF],
    // g-prior: β_j | D, γ ~ t_{n−1}(s β̂, s G_yy (1 − s R²)/(n−1) V_jj), s = n/(n+1).
    const auto cdf = [&](double x) {
      double f = 0.0;
      for (const auto* pair : {&g1, &g2}) {
        const Eigen::MatrixXd& g = *pair;
        const BmaResult& r = pair == &g1 ? a : b;
        for (ModelMask m = 0; m < (1U << p); ++m) {
          const double w = 0.5 * std::exp(r.log_posterior_probability(static_cast<Eigen::Index>(m)));
          if (!((m >> j) & 1U)) {
            f += w * (x >= 0.0 ? 1.0 : 0.0);
            continue;
          }
          const ModelFit fit = fit_model_from_gram(g, m);
          const Eigen::MatrixXd sub = [&] {
            std::vector<int> idx;
            for (int k = 0; k < p; ++k)
              if ((m >> k) & 1U) idx.push_back(k);
            Eigen::MatrixXd s(idx.size(), idx.size());
            for (std::size_t r1 = 0; r1 < idx.size(); ++r1)
              for (std::size_t r2 = 0; r2 < idx.size(); ++r2) s(r1, r2) = g(idx[r1], idx[r2]);
            return s;
          }();
          int pos = 0;
          for (int k = 0; k < j; ++k) pos += (m >> k) & 1U;
          const double v = sub.inverse()(pos, pos);
          const double beta = fit.coefficients(pos);
          const double r2 = fit.r_squared;
          const double s = n / (n + 1.0);
          const boost::math::students_t_distribution<double> t(n - 1.0);
          f += w * boost::math::cdf(t, (x - s * beta) / std::sqrt(s * g(p, p) * (1 - s * r2) / (n - 1.0) * v));
        }
      }
      return f;
    };
    const double lo = mixed.credible_intervals.lower(j);
    const double hi = mixed.credible_intervals.upper(j);
    const double omitted = mixed.credible_intervals.omitted_mass;
    CHECK(omitted < 1e-9);
    if (lo != 0.0) CHECK(cdf(lo) == Approx(0.05).margin(1e-8 + omitted));
    if (hi != 0.0) CHECK(cdf(hi) == Approx(0.95).margin(1e-8 + omitted));
    if (lo == 0.0 || hi == 0.0) {
      CHECK(cdf(-1e-12) <= (lo == 0.0 ? 0.05 : 0.95) + 1e-9);
      CHECK(cdf(0.0) >= (lo == 0.0 ? 0.05 : 0.95) - 1e-9);
    }
  }
  for (ModelMask m = 0; m < 8; ++m) {
    const double pa = std::exp(a.log_posterior_probability(m));
    const double pb = std::exp(b.log_posterior_probability(m));
    CHECK(std::exp(mixed.log_posterior_probability(m)) == Approx(0.5 * (pa + pb)).margin(1e-13));
  }
  CHECK_THROWS_AS(mix_bma_draws({}, n, cp, ModelPrior{}, opt), std::invalid_argument);
}

TEST_CASE("fit_model_from_gram: coefficient fields used by the mixture test", "[noise_aware]") {
  // (guards the hand-written CDF above: R² and β̂ of fit_model_from_gram are the least-squares ones)
  const Eigen::MatrixXd d = simulate(40, 2, 5, {0.4, 0.1});
  const Eigen::MatrixXd g = centred_gram(d);
  const ModelFit fit = fit_model_from_gram(g, 0b11);
  Eigen::MatrixXd x = d.leftCols(2);
  Eigen::VectorXd y = d.col(2);
  x.rowwise() -= x.colwise().mean();
  y.array() -= y.mean();
  const Eigen::VectorXd beta = x.colPivHouseholderQr().solve(y);
  CHECK(fit.coefficients(0) == Approx(beta(0)).epsilon(1e-10));
  CHECK(fit.coefficients(1) == Approx(beta(1)).epsilon(1e-10));
  CHECK(fit.r_squared == Approx(1.0 - (y - x * beta).squaredNorm() / y.squaredNorm()).epsilon(1e-10));
}

TEST_CASE("noise_aware_bma: as the noise scale goes to 0 it gives the non-private answer", "[noise_aware]") {
  const int n = 400;
  const int p = 3;
  const Eigen::MatrixXd g = centred_gram(unit_box_data(n, {0.4, 0.0, 0.2}, 0.15, 21));
  const Eigen::VectorXd bound = gram_diagonal_bounds(n, Eigen::VectorXd::Ones(p + 1));
  REQUIRE(admissible_gram(g, bound));
  const CoefficientPrior cp = coefficient_prior(PriorKind::zellner_siow);
  NoiseAwareOptions opt;
  opt.draws = 50;
  const BmaResult exact = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt.bma);
  // ε = 1e12: Laplace scale 1e-11, so every accepted G differs from G by ~1e-11 (relative ~1e-13).
  const SspMechanism mech = unit_laplace(p, n, 1e12);
  RngStream rng(5, 0, 0, StreamPurpose::noise);
  const Eigen::MatrixXd gstar = noisy_gram_matrix(g, mech, rng);
  const NoiseAwareResult r = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, gstar, rng, opt);
  CHECK_FALSE(r.fallback);
  CHECK(r.accepted == 50);
  CHECK(r.proposals == 50);
  for (int j = 0; j < p; ++j) {
    CHECK(r.posterior.posterior_inclusion_probability(j) ==
          Approx(exact.posterior_inclusion_probability(j)).margin(1e-8));
    CHECK(r.posterior.model_averaged_coefficients(j) ==
          Approx(exact.model_averaged_coefficients(j)).epsilon(1e-8).margin(1e-12));
    CHECK(r.posterior.posterior_sd(j) == Approx(exact.posterior_sd(j)).epsilon(1e-6));
    CHECK(r.posterior.credible_intervals.lower(j) ==
          Approx(exact.credible_intervals.lower(j)).epsilon(1e-6).margin(1e-9));
    CHECK(r.posterior.credible_intervals.upper(j) ==
          Approx(exact.credible_intervals.upper(j)).epsilon(1e-6).margin(1e-9));
    CHECK(r.pip_mc_se(j) < 1e-8);
  }
}

TEST_CASE("noise_aware_bma: on a fixed release at epsilon = 1 its intervals are wider than the plug-in ones",
          "[noise_aware]") {
  const int n = 2000;
  const int p = 3;
  const Eigen::MatrixXd g = centred_gram(unit_box_data(n, {0.5, 0.0, 0.3}, 0.15, 33));
  const Eigen::VectorXd bound = gram_diagonal_bounds(n, Eigen::VectorXd::Ones(p + 1));
  const SspMechanism mech = unit_laplace(p, n, 1.0);
  RngStream noise(7, 0, 0, StreamPurpose::noise);
  const Eigen::MatrixXd gstar = noisy_gram_matrix(g, mech, noise);
  RngStream ridge_rng(7, 1, 0, StreamPurpose::calibration);
  const double ridge = monte_carlo_regularization(mech, ridge_rng, 2000);
  const RegularizedGram plug_gram = regularize(gstar, ridge);
  const CoefficientPrior cp = coefficient_prior(PriorKind::g_prior);
  NoiseAwareOptions opt;
  opt.draws = 200;
  const BmaResult plug = bayesian_model_averaging(plug_gram.matrix, n, cp, ModelPrior{}, opt.bma);
  RngStream rng(7, 2, 0, StreamPurpose::noise);
  const NoiseAwareResult r = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, plug_gram.matrix, rng, opt);
  REQUIRE_FALSE(r.fallback);
  CHECK(r.accepted == 200);
  const auto& na = r.posterior.credible_intervals;
  const auto& pi = plug.credible_intervals;
  for (int j = 0; j < p; ++j) {
    CAPTURE(j, pi.lower(j), pi.upper(j), na.lower(j), na.upper(j));
    CHECK(na.upper(j) - na.lower(j) > pi.upper(j) - pi.lower(j));
    CHECK(r.posterior.posterior_sd(j) > plug.posterior_sd(j));
  }
}

TEST_CASE("noise_aware_bma: two seeds agree within their Monte Carlo standard errors", "[noise_aware][stat]") {
  // The draws are independent, so the PIP estimates of two runs differ by N(0, se1² + se2²)
  // approximately: |difference| ≤ 4 sqrt(se1² + se2²) fails with probability ~6e-5 per coordinate.
  const int n = 1000;
  const int p = 3;
  const Eigen::MatrixXd g = centred_gram(unit_box_data(n, {0.3, 0.0, 0.15}, 0.2, 44));
  const Eigen::VectorXd bound = gram_diagonal_bounds(n, Eigen::VectorXd::Ones(p + 1));
  const SspMechanism mech = unit_laplace(p, n, 1.0);
  RngStream noise(9, 0, 0, StreamPurpose::noise);
  const Eigen::MatrixXd gstar = noisy_gram_matrix(g, mech, noise);
  const CoefficientPrior cp = coefficient_prior(PriorKind::g_prior);
  NoiseAwareOptions opt;
  opt.draws = 300;
  opt.bma.credible_level = 0.0;
  RngStream rng1(9, 1, 0, StreamPurpose::noise);
  RngStream rng2(9, 2, 0, StreamPurpose::noise);
  const NoiseAwareResult a = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, gstar, rng1, opt);
  const NoiseAwareResult b = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, gstar, rng2, opt);
  REQUIRE_FALSE(a.fallback);
  REQUIRE_FALSE(b.fallback);
  for (int j = 0; j < p; ++j) {
    CAPTURE(j);
    const double se = std::hypot(a.pip_mc_se(j), b.pip_mc_se(j));
    CHECK(std::abs(a.posterior.posterior_inclusion_probability(j) - b.posterior.posterior_inclusion_probability(j)) <=
          4.0 * se + 1e-12);
    const double se_mean = std::hypot(a.mean_mc_se(j), b.mean_mc_se(j));
    CHECK(std::abs(a.posterior.model_averaged_coefficients(j) - b.posterior.model_averaged_coefficients(j)) <=
          4.0 * se_mean + 1e-12);
  }
  // the same seed gives the same answer
  RngStream rng3(9, 1, 0, StreamPurpose::noise);
  const NoiseAwareResult c = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, gstar, rng3, opt);
  CHECK(c.posterior.posterior_inclusion_probability == a.posterior.posterior_inclusion_probability);
}

TEST_CASE("noise_aware_bma: too few admissible draws fall back to the plug-in matrix, and says so", "[noise_aware]") {
  const int n = 50;
  const int p = 3;
  const Eigen::MatrixXd g = centred_gram(unit_box_data(n, {0.3, 0.0, 0.15}, 0.2, 45));
  const Eigen::VectorXd bound = gram_diagonal_bounds(n, Eigen::VectorXd::Ones(p + 1));
  const SspMechanism mech = unit_laplace(p, n, 0.01);  // scale 1000 against a diagonal ≤ 12.5
  RngStream rng(10, 0, 0, StreamPurpose::noise);
  const Eigen::MatrixXd gstar = noisy_gram_matrix(g, mech, rng);
  const RegularizedGram fb = regularize(gstar, 5000.0);
  const CoefficientPrior cp = coefficient_prior(PriorKind::g_prior);
  NoiseAwareOptions opt;
  opt.draws = 20;
  opt.max_proposals = 500;
  const NoiseAwareResult r = noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, fb.matrix, rng, opt);
  CHECK(r.fallback);
  CHECK(r.proposals == 500);
  CHECK(r.accepted < 20);
  const BmaResult plug = bayesian_model_averaging(fb.matrix, n, cp, ModelPrior{}, opt.bma);
  CHECK(r.posterior.posterior_inclusion_probability == plug.posterior_inclusion_probability);
  opt.draws = 0;
  CHECK_THROWS_AS(noise_aware_bma(gstar, mech, bound, n, cp, ModelPrior{}, fb.matrix, rng, opt), std::domain_error);
}
