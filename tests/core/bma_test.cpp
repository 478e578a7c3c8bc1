// Model averaging by Gray-code sweep enumeration against brute force (one QR least-squares fit
// of the raw data per model, the adaptive-quadrature Bayes factor, explicit normalisation), forced
// predictors, rank deficiency, and the known failure classes (docs/bma.md).
#include "dpmu/core/bma.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/log_math.hpp"
#include "dpmu/core/random.hpp"

using namespace dpmu::core;
using dpmu::test::centred_gram;
using dpmu::test::simulate;

namespace {
struct BruteForce {
  std::vector<double> log_post;  // by mask
  Eigen::VectorXd pip, coef;
};

// Independent computation: per model, R² by Householder QR of [1 | X_γ | y] on the raw data
// (fit_nested_models), OLS by ColPivHouseholderQR of [1 | X_γ], log B by the adaptive quadrature.
BruteForce brute_force(const Eigen::MatrixXd& d, const CoefficientPrior& cp, const ModelPrior& mp) {
  const int n = static_cast<int>(d.rows());
  const int p = static_cast<int>(d.cols()) - 1;
  BruteForce out;
  out.log_post.assign(1U << p, -INFINITY);
  const Eigen::VectorXd y = d.col(p);
  const Eigen::MatrixXd ones = Eigen::MatrixXd::Ones(n, 1);
  std::vector<Eigen::VectorXd> betas(1U << p);
  std::vector<double> shrink(1U << p, 0.0);
  for (unsigned m = 0; m < (1U << p); ++m) {
    const int k = __builtin_popcount(m);
    double lq = 0.0;
    Eigen::MatrixXd x(n, k);
    for (int j = 0, c = 0; j < p; ++j) {
      if ((m >> j) & 1U) x.col(c++) = d.col(j);
    }
    if (k > 0) lq = fit_nested_models(ones, x, y).log_one_minus_r_squared;
    double lb = 0.0, s = 1.0;
    if (is_bayesian(cp.prior.kind)) {
      if (k > 0) {
        const auto bf = log_bayes_factor_and_shrinkage(cp.prior, lq, n, k, 1);
        lb = bf.log_bayes_factor;
        s = bf.shrinkage;
      }
    } else {
      lb = log_information_criterion(cp.prior.kind, lq, n, k);
    }
    out.log_post[m] = lb + log_prior_model_probability(mp, k, p);
    shrink[m] = s;
    Eigen::MatrixXd xi(n, k + 1);
    xi.col(0).setOnes();
    xi.rightCols(k) = x;
    betas[m] = xi.colPivHouseholderQr().solve(y).tail(k);
  }
  const double z = log_sum_exp(out.log_post);
  out.pip = Eigen::VectorXd::Zero(p);
  out.coef = Eigen::VectorXd::Zero(p);
  for (unsigned m = 0; m < (1U << p); ++m) {
    out.log_post[m] -= z;
    const double w = std::exp(out.log_post[m]);
    for (int j = 0, c = 0; j < p; ++j) {
      if ((m >> j) & 1U) {
        out.pip(j) += w;
        out.coef(j) += w * shrink[m] * betas[m](c++);
      }
    }
  }
  return out;
}
}  // namespace

TEST_CASE("enumeration equals brute-force per-model fits for every prior", "[bma]") {
  const Eigen::MatrixXd d = simulate(80, 7, 11, {0.8, 0.0, -0.5, 0.0, 0.3});
  const Eigen::MatrixXd g = centred_gram(d);
  for (const char* name : {"g-prior", "zellner-siow", "hyper-g", "hyper-g-n", "robust", "bic", "aic"}) {
    for (const char* mp_name : {"beta-binomial:1,1", "uniform", "bernoulli:0.3"}) {
      const CoefficientPrior cp = parse_coefficient_prior(name);
      const ModelPrior mp = parse_model_prior(mp_name);
      BmaOptions opt;
      opt.refresh_interval = 16;  // exercise the rebuild path too
      const BmaResult r = bayesian_model_averaging(g, 80, cp, mp, opt);
      const BruteForce b = brute_force(d, cp, mp);
      INFO(name << " / " << mp_name);
      CHECK(r.models_evaluated == 128);
      CHECK(r.models_rank_deficient == 0);
      for (unsigned m = 0; m < 128; ++m) {
        REQUIRE(std::abs(r.log_posterior_probability(m) - b.log_post[m]) < 1e-8);
      }
      for (int j = 0; j < 7; ++j) {
        CHECK(std::abs(r.posterior_inclusion_probability(j) - b.pip(j)) < 1e-10);
        CHECK(std::abs(r.model_averaged_coefficients(j) - b.coef(j)) < 1e-9);
      }
      // Σ PIP = E[model size]
      double esize = 0;
      for (unsigned m = 0; m < 128; ++m) esize += __builtin_popcount(m) * std::exp(b.log_post[m]);
      CHECK(r.expected_model_size == Approx(esize).epsilon(1e-10));
      // HPM and MPM
      unsigned best = 0;
      for (unsigned m = 1; m < 128; ++m) {
        if (b.log_post[m] > b.log_post[best]) best = m;
      }
      CHECK(r.highest_posterior_model == best);
      CHECK(r.top_models.front().model == best);
      ModelMask mpm = 0;
      for (int j = 0; j < 7; ++j) {
        if (b.pip(j) >= 0.5) mpm |= 1ULL << j;
      }
      CHECK(r.median_probability_model == mpm);
      double top_sum = 0;
      for (std::size_t i = 1; i < r.top_models.size(); ++i) {
        CHECK(r.top_models[i].posterior_probability <= r.top_models[i - 1].posterior_probability);
      }
      for (const auto& t : r.top_models) top_sum += t.posterior_probability;
      CHECK(top_sum <= 1.0 + 1e-12);
    }
  }
}

TEST_CASE("sweep enumeration keeps full accuracy over 2^16 models (R² and OLS vs Cholesky)", "[bma]") {
  const Eigen::MatrixXd d = simulate(200, 16, 5, {1.0, 0.5, 0.0, 0.2});
  const Eigen::MatrixXd g = centred_gram(d);
  const CoefficientPrior cp = parse_coefficient_prior("g-prior");
  const BmaResult r = bayesian_model_averaging(g, 200, cp, parse_model_prior("uniform"));
  // log posterior differences only depend on R²: compare 200 scattered models with direct fits.
  const double n = 200;
  double ref0 = 0;
  for (unsigned m = 0; m < (1U << 16); m += 331) {
    const ModelFit fit = fit_model_from_gram(g, m);
    const double lb = log_bayes_factor(cp.prior, fit.log_one_minus_r_squared, n, __builtin_popcount(m), 1);
    if (m == 0) ref0 = r.log_posterior_probability(0) - lb;
    CHECK(std::abs(r.log_posterior_probability(m) - lb - ref0) < 1e-9);
  }
}

TEST_CASE("forced predictors: the model prior is over the free predictors only", "[bma]") {
  const Eigen::MatrixXd d = simulate(60, 6, 3, {0.5, 0.5, 0.2});
  const Eigen::MatrixXd g = centred_gram(d);
  BmaOptions opt;
  opt.always_included = 0b000011;  // predictors 0 and 1
  opt.top_models = 64;
  {
    const BmaResult r =
        bayesian_model_averaging(g, 60, parse_coefficient_prior("bic"), parse_model_prior("beta-binomial:1,1"), opt);
    CHECK(r.models_evaluated == 16);
    CHECK(r.top_models.size() == 16);
    // every size 0..4 of the free predictors has prior mass 1/5
    std::vector<double> mass(5, 0.0);
    double total = 0;
    for (const auto& t : r.top_models) {
      CHECK((t.model & 0b11) == 0b11);
      mass[static_cast<std::size_t>(t.model_size - 2)] += std::exp(t.log_prior_probability);
      total += std::exp(t.log_prior_probability);
    }
    for (double m : mass) CHECK(m == Approx(0.2).epsilon(1e-12));
    CHECK(total == Approx(1.0).epsilon(1e-12));
    CHECK(r.posterior_inclusion_probability(0) == 1.0);
    CHECK(r.posterior_inclusion_probability(1) == 1.0);
    // excluded models (without the forced predictors) have probability zero
    CHECK(std::isinf(r.log_posterior_probability(0b000001)));
    CHECK(std::isinf(r.log_posterior_probability(0)));
    CHECK(std::exp(log_sum_exp(std::span<const double>(
              r.log_posterior_probability.data(), r.log_posterior_probability.size()))) == Approx(1.0).epsilon(1e-12));
    CHECK(r.prior_inclusion_probability(3) == 0.5);
  }
  {
    const BmaResult r = bayesian_model_averaging(g, 60, parse_coefficient_prior("zellner-siow"),
                                                 parse_model_prior("bernoulli:0.2"), opt);
    CHECK(r.prior_inclusion_probability(0) == 1.0);
    for (int j = 2; j < 6; ++j) CHECK(r.prior_inclusion_probability(j) == 0.2);
    double prior_incl_2 = 0;
    for (const auto& t : r.top_models) {
      if ((t.model >> 2) & 1U) prior_incl_2 += std::exp(t.log_prior_probability);
    }
    CHECK(prior_incl_2 == Approx(0.2).epsilon(1e-12));
  }
}

TEST_CASE("collinear and constant predictors: models dropped and counted, no NaN", "[bma]") {
  Eigen::MatrixXd d = simulate(50, 5, 8, {0.7, 0.3});
  d.col(3) = d.col(1);        // exact duplicate
  d.col(4).setConstant(2.0);  // constant: zero after centring
  const Eigen::MatrixXd g = centred_gram(d);
  for (const char* name : {"zellner-siow", "bic", "g-prior"}) {
    const BmaResult r =
        bayesian_model_averaging(g, 50, parse_coefficient_prior(name), parse_model_prior("beta-binomial:1,1"));
    INFO(name);
    // models with predictor 4, or with both 1 and 3, are rank deficient: 16 + 4 = 20 of 32
    CHECK(r.models_rank_deficient == 20);
    CHECK(r.models_evaluated == 12);
    CHECK(r.posterior_inclusion_probability.allFinite());
    CHECK(r.model_averaged_coefficients.allFinite());
    CHECK(r.posterior_inclusion_probability(4) == 0.0);
    CHECK(std::isinf(r.log_posterior_probability(0b01010)));
  }
}

TEST_CASE("a non-positive-definite (noisy) Gram matrix gives finite outputs with dropped models", "[bma]") {
  const Eigen::MatrixXd d = simulate(40, 4, 9, {0.5});
  Eigen::MatrixXd g = centred_gram(d);
  g(0, 0) = 0.01 * g(0, 0);  // as after DP noise: G* not PD
  g(0, 1) = g(1, 0) = 3.0 * std::sqrt(g(0, 0) * g(1, 1));
  const BmaResult r =
      bayesian_model_averaging(g, 40, parse_coefficient_prior("zellner-siow"), parse_model_prior("uniform"));
  CHECK(r.models_rank_deficient > 0);
  CHECK(r.posterior_inclusion_probability.allFinite());
  CHECK(r.model_averaged_coefficients.allFinite());
  CHECK((r.posterior_inclusion_probability.array() >= 0).all());
  CHECK((r.posterior_inclusion_probability.array() <= 1).all());
}

TEST_CASE("R² near 1 and near 0 keep finite probabilities and shrinkage in [0,1]", "[bma]") {
  Eigen::MatrixXd d = simulate(30, 3, 4, {});
  Eigen::MatrixXd near = d;
  // R² = 1 - O(1e-11): the residual 1e-5·e is orthogonal-ish to every predictor. (This test used
  // y = 2 x0 - x1 + 1e-9 x2, which lies in the span of the predictors: the full model is an exact
  // fit, which has infinite evidence under these priors and is now an error; see the next test.)
  const Eigen::MatrixXd e = simulate(30, 0, 99, {});
  near.col(3) = 2.0 * d.col(0) - d.col(1) + 1e-5 * e.col(0);
  for (const auto& data : {d, near}) {
    const Eigen::MatrixXd g = centred_gram(data);
    for (const char* name : {"zellner-siow", "zellner-siow-laplace", "hyper-g", "robust", "bic"}) {
      const BmaResult r = bayesian_model_averaging(g, 30, parse_coefficient_prior(name), parse_model_prior("uniform"));
      INFO(name);
      CHECK(r.posterior_inclusion_probability.allFinite());
      CHECK(r.model_averaged_coefficients.allFinite());
      for (const auto& t : r.top_models) {
        CHECK(t.shrinkage >= 0.0);
        CHECK(t.shrinkage <= 1.0);
      }
    }
  }
}

TEST_CASE("an exact fit (R² = 1) wins under the g-prior and is an error naming it under the other priors",
          "[bma][exact_fit]") {
  // y = x1 exactly, x2 and x3 noise; and y = 2 x1 + 3 (centring leaves rounding residues). Before the
  // fix both gave PIP(x1) = 0 or depended on rounding; the exact-fit model must win.
  const int n = 100;
  Eigen::MatrixXd base = simulate(n, 3, 17, {});
  for (int variant = 0; variant < 2; ++variant) {
    Eigen::MatrixXd d = base;
    d.col(3) = variant == 0 ? Eigen::VectorXd(d.col(0)) : Eigen::VectorXd((2.0 * d.col(0)).array() + 3.0);
    const Eigen::MatrixXd g = centred_gram(d);
    INFO("variant " << variant);
    const GramModelFit fit = classify_model_fit(g, 0b001);
    CHECK(fit.kind == GramFitKind::exact_fit);
    CHECK(fit.r_squared == 1.0);
    CHECK(fit.coefficients(0) == Approx(variant == 0 ? 1.0 : 2.0).epsilon(1e-12));
    CHECK(classify_model_fit(g, 0b110).kind == GramFitKind::full_rank);
    CHECK(find_exact_fit_model(g) == std::optional<ModelMask>(0b001));
    const auto gp = parse_coefficient_prior("g-prior");
    const BmaResult r = bayesian_model_averaging(g, n, gp, parse_model_prior("beta-binomial:1,1"));
    CHECK(r.posterior_inclusion_probability(0) == 1.0);
    CHECK(r.highest_posterior_model == 0b001);
    CHECK(r.models_exact_fit == 4);  // every model with x1
    CHECK(r.models_rank_deficient == 0);
    CHECK(r.model_averaged_coefficients(0) == Approx((variant == 0 ? 1.0 : 2.0) * n / (n + 1.0)).epsilon(1e-9));
    REQUIRE(!r.top_models.empty());
    CHECK(r.top_models[0].model == 0b001);
    CHECK(r.top_models[0].r_squared == 1.0);
    CHECK(r.top_models[0].log_marginal == Approx(0.5 * (n - 1 - 1) * std::log1p(n)).epsilon(1e-14));
    // the larger exact fits lose by the g-prior's (1 + g)^{-1/2} per extra predictor
    CHECK(std::exp(r.log_posterior_probability(0b011) - r.log_posterior_probability(0b001)) ==
          Approx(std::exp(log_prior_model_probability(parse_model_prior("beta-binomial:1,1"), 2, 3) -
                          log_prior_model_probability(parse_model_prior("beta-binomial:1,1"), 1, 3)) /
                 std::sqrt(1.0 + n))
              .epsilon(1e-9));
    RngStream rng(3, 0, 0, StreamPurpose::noise);
    McmcOptions mo;
    mo.min_iterations = 2000;
    const BmaResult m = bayesian_model_averaging_mcmc(g, n, gp, parse_model_prior("uniform"), rng, mo);
    CHECK(m.posterior_inclusion_probability(0) > 0.99);  // the chain starts at the null model
    CHECK(m.highest_posterior_model == 0b001);
    for (const char* name : {"zellner-siow", "zellner-siow-laplace", "hyper-g", "hyper-g-n", "robust", "bic", "aic"}) {
      INFO(name);
      try {
        bayesian_model_averaging(g, n, parse_coefficient_prior(name), parse_model_prior("uniform"));
        FAIL("no ExactFitError");
      } catch (const ExactFitError& err) {
        CHECK(err.model() == 0b001);
        CHECK_THAT(err.what(), Catch::Contains("fits the response exactly") && Catch::Contains("{1}"));
      }
      RngStream rng2(3, 0, 0, StreamPurpose::noise);
      CHECK_THROWS_AS(
          bayesian_model_averaging_mcmc(g, n, parse_coefficient_prior(name), parse_model_prior("uniform"), rng2, mo),
          ExactFitError);
    }
  }
  // forced predictors: the exact-fit model named contains them
  Eigen::MatrixXd d = base;
  d.col(3) = d.col(0) - d.col(2);
  const Eigen::MatrixXd g = centred_gram(d);
  CHECK(find_exact_fit_model(g, 0b010) == std::optional<ModelMask>(0b111));
  CHECK(find_exact_fit_model(g) == std::optional<ModelMask>(0b101));
  CHECK(!find_exact_fit_model(centred_gram(base)).has_value());
}

TEST_CASE("rank_deficient_columns names constant and collinear predictors", "[bma]") {
  Eigen::MatrixXd d = simulate(50, 5, 8, {0.7, 0.3});
  d.col(3) = d.col(1);                   // duplicate of 1
  d.col(4) = d.col(0) + 2.0 * d.col(2);  // combination of 0 and 2
  Eigen::MatrixXd g = centred_gram(d);
  const auto none = rank_deficient_columns(g);
  REQUIRE(none.size() == 2);
  CHECK(none[0].column == 3);
  CHECK(!none[0].constant);
  CHECK(none[0].collinear_with == 0b00010);
  CHECK(none[1].column == 4);
  CHECK(none[1].collinear_with == 0b00101);
  g.row(2).setZero();
  g.col(2).setZero();  // as if x2 were constant (centred to 0); x4 then is no combination of the rest
  const auto c = rank_deficient_columns(g);
  REQUIRE(c.size() == 2);
  CHECK(c[0].column == 2);
  CHECK(c[0].constant);
  CHECK(c[1].column == 3);
  CHECK(c[1].collinear_with == 0b00010);
  CHECK(rank_deficient_columns(centred_gram(simulate(50, 5, 8, {0.7}))).empty());
}

TEST_CASE("a NaN log marginal is an error, never a dropped model", "[bma]") {
  // hyper-g with a huge a used to give NaN/inf log B: the model was dropped silently (PIP 0).
  const Eigen::MatrixXd g = centred_gram(simulate(60, 3, 5, {0.5}));
  for (const double a : {1e20, 1e50, 1e300}) {
    INFO(a);
    for (const char* name : {"hyper-g", "hyper-g-n"}) {
      const BmaResult r =
          bayesian_model_averaging(g, 60, parse_coefficient_prior(name, std::nullopt, a), parse_model_prior("uniform"));
      // a → ∞: g → 0 a priori, every B = 1, the posterior is the prior
      for (int j = 0; j < 3; ++j) CHECK(r.posterior_inclusion_probability(j) == Approx(0.5).margin(1e-6));
      CHECK(r.models_evaluated == 8);
    }
  }
}

TEST_CASE("bad inputs to model averaging are rejected", "[bma]") {
  const Eigen::MatrixXd g = centred_gram(simulate(30, 3, 4, {}));
  const auto cp = parse_coefficient_prior("bic");
  const auto mp = parse_model_prior("uniform");
  CHECK_THROWS_AS(bayesian_model_averaging(g.leftCols(3), 30, cp, mp), std::invalid_argument);
  CHECK_THROWS_WITH(bayesian_model_averaging(g, 4, cp, mp), Catch::Contains("n is 4"));
  Eigen::MatrixXd bad = g;
  bad(1, 2) = NAN;
  CHECK_THROWS_AS(bayesian_model_averaging(bad, 30, cp, mp), std::domain_error);
  BmaOptions opt;
  opt.always_included = 1ULL << 5;
  CHECK_THROWS_AS(bayesian_model_averaging(g, 30, cp, mp, opt), std::invalid_argument);
  Eigen::MatrixXd zero_y = g;
  zero_y(3, 3) = 0;
  CHECK_THROWS_AS(bayesian_model_averaging(zero_y, 30, cp, mp), std::domain_error);
}

TEST_CASE("MCMC over models agrees with enumeration within Monte Carlo error", "[bma][mcmc][statistical]") {
  const Eigen::MatrixXd d = simulate(150, 12, 21, {0.4, 0.0, 0.25, 0.0, 0.0, 0.15});
  const Eigen::MatrixXd g = centred_gram(d);
  const auto cp = parse_coefficient_prior("zellner-siow");
  const auto mp = parse_model_prior("beta-binomial:1,1");
  const BmaResult exact = bayesian_model_averaging(g, 150, cp, mp);
  RngStream rng(31, 0, 0, StreamPurpose::noise);
  McmcOptions opt;
  opt.tolerance = 0.005;
  McmcDiagnostics diag;
  const BmaResult mc = bayesian_model_averaging_mcmc(g, 150, cp, mp, rng, opt, &diag);
  INFO("iterations " << diag.iterations << " acceptance " << diag.acceptance_rate);
  CHECK(diag.converged);
  CHECK(diag.models_visited > 100);
  // Fixed seed; observed max error 0.007 after ~1e5 iterations. The bound 0.05 is 3 MC SE even for an
  // effective sample size of only 900 (SE ≤ 0.5/√900 ≈ 0.017).
  CHECK((mc.posterior_inclusion_probability - exact.posterior_inclusion_probability).cwiseAbs().maxCoeff() < 0.05);
  CHECK((mc.model_averaged_coefficients - exact.model_averaged_coefficients).cwiseAbs().maxCoeff() < 0.03);
  CHECK(mc.highest_posterior_model == exact.highest_posterior_model);
  // renormalised probability of the HPM is at least its exact probability (fewer models)
  CHECK(mc.top_models.front().posterior_probability >= exact.top_models.front().posterior_probability - 1e-12);
  // forced predictors stay in every visited model
  McmcOptions forced = opt;
  forced.always_included = 0b10;
  RngStream rng2(32, 0, 0, StreamPurpose::noise);
  const BmaResult mf = bayesian_model_averaging_mcmc(g, 150, cp, mp, rng2, forced);
  CHECK(mf.posterior_inclusion_probability(1) == 1.0);
  for (const auto& t : mf.top_models) CHECK((t.model & 0b10) == 0b10);
}

TEST_CASE("n = 10^7: enumeration matches per-model adaptive quadrature and finds the true model", "[bma]") {
  // G = n·Σ for x ~ N(0, I_4 + 0.3·11'), y = 0.01 x0 + 0.005 x1 + N(0, 1): exact population Gram matrix.
  const double n = 1e7;
  const int p = 4;
  Eigen::MatrixXd sx = Eigen::MatrixXd::Identity(p, p);
  sx.array() += 0.3;
  Eigen::VectorXd b = Eigen::VectorXd::Zero(p);
  b(0) = 0.01;
  b(1) = 0.005;
  Eigen::MatrixXd g(p + 1, p + 1);
  g.topLeftCorner(p, p) = sx;
  g.col(p).head(p) = sx * b;
  g.row(p).head(p) = (sx * b).transpose();
  g(p, p) = b.dot(sx * b) + 1.0;
  g *= n;
  for (const char* name : {"zellner-siow", "hyper-g", "g-prior", "bic"}) {
    const auto cp = parse_coefficient_prior(name);
    const auto mp = parse_model_prior("beta-binomial:1,1");
    const BmaResult r = bayesian_model_averaging(g, n, cp, mp);
    std::vector<double> w(16);
    for (unsigned m = 0; m < 16; ++m) {
      const ModelFit fit = fit_model_from_gram(g, m);
      const int k = __builtin_popcount(m);
      const double lb = is_bayesian(cp.prior.kind)
                            ? (k ? log_bayes_factor(cp.prior, fit.log_one_minus_r_squared, n, k, 1) : 0.0)
                            : log_information_criterion(cp.prior.kind, fit.log_one_minus_r_squared, n, k);
      w[m] = lb + log_prior_model_probability(mp, k, p);
    }
    const double z = log_sum_exp(w);
    INFO(name);
    for (unsigned m = 0; m < 16; ++m) CHECK(std::abs(r.log_posterior_probability(m) - (w[m] - z)) < 1e-8);
    CHECK(r.highest_posterior_model == 0b0011);
    CHECK(r.posterior_inclusion_probability(0) > 0.999);
    CHECK(r.posterior_inclusion_probability(1) > 0.999);
    CHECK(r.posterior_inclusion_probability(2) < 0.1);  // hyper-g (fixed a) penalises null predictors least: 0.057
    CHECK(std::abs(r.model_averaged_coefficients(0) - 0.01) < 1e-3);
  }
}

TEST_CASE("heredity parents: a model with an interaction holds its main effects and the rest is renormalised",
          "[bma]") {
  // BAS's force.heredity for interactions as post-processing of the unrestricted posterior: columns
  // 0 = a, 1 = b, 2 = a:b (term {2}, parents {0, 1}) and a column 3 outside the rule; models with
  // column 2 but not both 0 and 1 get probability 0, the others the renormalised posterior.
  const Eigen::MatrixXd d = simulate(80, 4, 2, {0.6, 0.4});
  const Eigen::MatrixXd g = centred_gram(d);
  const auto admissible = [](ModelMask m) { return ((m >> 2) & 1U) == 0 || (m & 0b0011) == 0b0011; };
  for (const char* prior : {"bic", "zellner-siow"}) {
    INFO(prior);
    BmaOptions opt;
    opt.top_models = 16;
    const auto cp = parse_coefficient_prior(prior);
    const auto mp = parse_model_prior("beta-binomial:1,1");
    const BmaResult all = bayesian_model_averaging(g, 80, cp, mp, opt);
    opt.heredity_parents = {{.term = 0b0100, .parents = 0b0011}};
    const BmaResult restricted = bayesian_model_averaging(g, 80, cp, mp, opt);
    CHECK(restricted.models_heredity_excluded == 6);  // {ab}, {a, ab}, {b, ab}, each with or without column 3
    double kept = 0.0;
    Eigen::VectorXd pip = Eigen::VectorXd::Zero(4);
    for (ModelMask m = 0; m < 16; ++m) {
      if (!admissible(m)) {
        CHECK(std::isinf(restricted.log_posterior_probability(static_cast<Eigen::Index>(m))));
        continue;
      }
      const double w = std::exp(all.log_posterior_probability(static_cast<Eigen::Index>(m)));
      kept += w;
      for (int j = 0; j < 4; ++j) pip(j) += ((m >> j) & 1U) ? w : 0.0;
    }
    for (int j = 0; j < 4; ++j) {
      CHECK(restricted.posterior_inclusion_probability(j) == Approx(pip(j) / kept).epsilon(1e-10));
    }
    // the interaction is never more probable than either main effect
    CHECK(restricted.posterior_inclusion_probability(2) <= restricted.posterior_inclusion_probability(0) + 1e-15);
    CHECK(restricted.posterior_inclusion_probability(2) <= restricted.posterior_inclusion_probability(1) + 1e-15);
  }
  BmaOptions bad;
  bad.heredity_parents = {{.term = 0b0100, .parents = 0b0110}};  // the term among its parents
  CHECK_THROWS_AS(bayesian_model_averaging(g, 80, parse_coefficient_prior("bic"), parse_model_prior("uniform"), bad),
                  std::invalid_argument);
}

TEST_CASE("heredity groups: models with part of a group get probability 0, the rest is the renormalised posterior",
          "[bma]") {
  // The reference is BAS's force.heredity as post-processing: the ungrouped posterior over every
  // model, the inadmissible ones set to 0, renormalised.
  const Eigen::MatrixXd d = simulate(80, 5, 2, {0.6, 0.4});
  const Eigen::MatrixXd g = centred_gram(d);
  const std::vector<ModelMask> groups = {0b00110, 0b11000};  // {1, 2} and {3, 4} together
  const auto admissible = [&](ModelMask m) {
    for (const ModelMask grp : groups) {
      if ((m & grp) != 0 && (m & grp) != grp) return false;
    }
    return true;
  };
  for (const char* prior : {"bic", "zellner-siow", "g-prior"}) {
    INFO(prior);
    BmaOptions opt;
    opt.top_models = 32;
    const auto cp = parse_coefficient_prior(prior);
    const auto mp = parse_model_prior("beta-binomial:1,1");
    const BmaResult all = bayesian_model_averaging(g, 80, cp, mp, opt);
    opt.heredity_groups = groups;
    const BmaResult grouped = bayesian_model_averaging(g, 80, cp, mp, opt);
    CHECK(grouped.models_heredity_excluded == 32 - 8);  // 2 x 2 x 2 admissible of 32
    double kept = 0.0;
    Eigen::VectorXd pip = Eigen::VectorXd::Zero(5), prior_incl = Eigen::VectorXd::Zero(5);
    double prior_total = 0.0;
    for (ModelMask m = 0; m < 32; ++m) {
      if (!admissible(m)) {
        CHECK(std::isinf(grouped.log_posterior_probability(static_cast<Eigen::Index>(m))));
        continue;
      }
      const double w = std::exp(all.log_posterior_probability(static_cast<Eigen::Index>(m)));
      const double pr = std::exp(log_prior_model_probability(mp, model_size(m), 5));
      kept += w;
      prior_total += pr;
      for (int j = 0; j < 5; ++j) {
        if ((m >> j) & 1U) {
          pip(j) += w;
          prior_incl(j) += pr;
        }
      }
    }
    for (ModelMask m = 0; m < 32; ++m) {
      if (!admissible(m)) continue;
      CHECK(std::exp(grouped.log_posterior_probability(static_cast<Eigen::Index>(m))) ==
            Approx(std::exp(all.log_posterior_probability(static_cast<Eigen::Index>(m))) / kept).epsilon(1e-10));
    }
    for (int j = 0; j < 5; ++j) {
      CHECK(grouped.posterior_inclusion_probability(j) == Approx(pip(j) / kept).epsilon(1e-10));
      CHECK(grouped.prior_inclusion_probability(j) == Approx(prior_incl(j) / prior_total).epsilon(1e-12));
    }
    CHECK(grouped.posterior_inclusion_probability(1) ==
          Approx(grouped.posterior_inclusion_probability(2)).epsilon(1e-12));
    double listed_prior = 0.0;
    for (const auto& t : grouped.top_models) listed_prior += std::exp(t.log_prior_probability);
    CHECK(listed_prior == Approx(1.0).epsilon(1e-12));  // renormalised over the 8 admissible models
  }
}
