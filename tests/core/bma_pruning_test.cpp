// Pruning of negligible models (BmaOptions::negligible_log_odds, docs/bma.md "Pruning negligible
// models"): the bound log_likelihood_sup_over_g against a brute-force maximum over a grid of g and
// against every exact mixture evidence, and model averaging with pruning against the unpruned
// enumeration within the stated error 2^p e^{-margin}.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/model_space.hpp"

using namespace dpmu::core;
using dpmu::test::centred_gram;
using dpmu::test::simulate;

namespace {
// log L(g) of the g-prior, written out independently of the library's forms.
double log_likelihood(double g, double r2, double n, int k, int p0) {
  const double m = n - p0;
  return 0.5 * (m - k) * std::log1p(g) - 0.5 * m * std::log1p(g * (1.0 - r2));
}
}  // namespace

TEST_CASE("log_likelihood_sup_over_g: the maximum of the g-prior likelihood (brute force over g)", "[bma][pruning]") {
  for (double n : {12.0, 100.0, 5000.0, 1e6}) {
    for (int k : {1, 3, 9}) {
      for (double r2 : {1e-6, 1e-3, 0.01, 0.2, 0.7, 0.99}) {
        double best = 0.0;  // g = 0
        for (double t = -30.0; t <= 40.0; t += 1e-3) best = std::max(best, log_likelihood(std::exp(t), r2, n, k, 1));
        const double sup = log_likelihood_sup_over_g(std::log1p(-r2), n, k, 1);
        INFO("n = " << n << ", k = " << k << ", R2 = " << r2);
        // the grid maximum is below the supremum and within the grid's resolution of it
        CHECK(best <= sup + 1e-12 * std::max(1.0, std::abs(sup)));
        CHECK(sup - best <= 1e-6 * std::max(1.0, std::abs(sup)));
      }
    }
  }
  CHECK(log_likelihood_sup_over_g(std::log1p(-0.5), 100.0, 0, 1) == 0.0);
  // mR² ≤ k: the likelihood decreases in g, the supremum is L(0) = 1
  CHECK(log_likelihood_sup_over_g(std::log1p(-0.001), 100.0, 1, 1) == 0.0);
}

TEST_CASE("log_likelihood_sup_over_g bounds the exact evidence of every proper mixture of g-priors", "[bma][pruning]") {
  int checked = 0;
  for (const char* name : {"zellner-siow", "hyper-g", "hyper-g-n", "robust"}) {
    const CoefficientPrior cp = parse_coefficient_prior(name);
    for (double n : {15.0, 200.0, 5000.0, 1e5, 1e7}) {
      for (int k : {1, 2, 5, 9}) {
        for (double r2 : {1e-9, 1e-4, 0.01, 0.1, 0.5, 0.9, 0.999}) {
          const double log_q = std::log1p(-r2);
          const double log_b = log_model_marginal(cp, log_q, n, k, 1).log_bayes_factor;
          INFO(name << ": n = " << n << ", k = " << k << ", R2 = " << r2 << ", log B = " << log_b);
          CHECK(log_b <= log_likelihood_sup_over_g(log_q, n, k, 1) + 1e-9 * std::max(1.0, std::abs(log_b)));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 4 * 5 * 4 * 7);
}

TEST_CASE("bayesian_model_averaging with pruning: within 2^p e^-margin of the full enumeration", "[bma][pruning]") {
  const int p = 8;
  // a strong signal on 3 of 8 predictors: most models are negligible
  const Eigen::MatrixXd g = centred_gram(simulate(400, p, 71, {1.0, -0.8, 0.6}, 1.0));
  const ModelPrior mp = parse_model_prior("beta-binomial:1,1");
  for (const char* name : {"zellner-siow", "hyper-g", "robust"}) {
    const CoefficientPrior cp = parse_coefficient_prior(name);
    BmaOptions full;
    full.credible_level = 0.0;
    const BmaResult exact = bayesian_model_averaging(g, 400.0, cp, mp, full);
    for (double error : {1e-3, 1e-8, 1e-17}) {
      BmaOptions pruned = full;
      pruned.negligible_log_odds = negligible_log_odds_for(p, error);
      const BmaResult r = bayesian_model_averaging(g, 400.0, cp, mp, pruned);
      INFO(name << ", stated relative error " << error);
      CHECK(r.models_negligible > 0);
      CHECK(r.models_evaluated + r.models_negligible + r.models_rank_deficient == (1U << p));
      CHECK(r.highest_posterior_model == exact.highest_posterior_model);
      CHECK(r.median_probability_model == exact.median_probability_model);
      // the skipped models' share of the posterior is at most `error`: probabilities move by at most
      // that much, means by at most that share of the coefficients' scale
      const double tol = error + 1e-14;
      const double scale = exact.model_averaged_coefficients.cwiseAbs().maxCoeff();
      for (int j = 0; j < p; ++j) {
        CHECK(std::abs(r.posterior_inclusion_probability(j) - exact.posterior_inclusion_probability(j)) <= tol);
        CHECK(std::abs(r.model_averaged_coefficients(j) - exact.model_averaged_coefficients(j)) <= 10.0 * tol * scale);
      }
      // the models kept have their exact probabilities (up to the normaliser's share of the skipped)
      int kept = 0;
      for (Eigen::Index m = 0; m < r.log_posterior_probability.size(); ++m) {
        if (!std::isfinite(r.log_posterior_probability(m))) {
          CHECK(exact.log_posterior_probability(m) < std::log(error));  // skipped: provably negligible
          continue;
        }
        ++kept;
        // log P changes only by the normaliser, log(1 - skipped share) >= log(1 - error)
        CHECK(std::abs(r.log_posterior_probability(m) - exact.log_posterior_probability(m)) <= 2.0 * tol);
      }
      CHECK(kept == static_cast<int>(r.models_evaluated));
    }
  }
}

TEST_CASE("bayesian_model_averaging pruning: off by default, ignored for closed forms, invalid margins refused",
          "[bma][pruning]") {
  const Eigen::MatrixXd g = centred_gram(simulate(300, 6, 72, {1.0, 0.5}, 1.0));
  const ModelPrior mp = parse_model_prior("uniform");
  BmaOptions o;
  o.credible_level = 0.0;
  CHECK(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("zellner-siow"), mp, o).models_negligible == 0);
  o.negligible_log_odds = 1.0;  // aggressive, but the g-prior and BIC have closed forms: nothing is skipped
  CHECK(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("g-prior", 300.0), mp, o).models_negligible == 0);
  CHECK(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("bic"), mp, o).models_negligible == 0);
  CHECK(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("zellner-siow-laplace"), mp, o).models_negligible ==
        0);
  o.negligible_log_odds = -1.0;
  CHECK_THROWS_WITH(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("zellner-siow"), mp, o),
                    Catch::Contains("negligible_log_odds"));
  o.negligible_log_odds = std::nan("");
  CHECK_THROWS_WITH(bayesian_model_averaging(g, 300.0, parse_coefficient_prior("zellner-siow"), mp, o),
                    Catch::Contains("negligible_log_odds"));
  CHECK(negligible_log_odds_for(9, 1e-17) == Approx(9 * std::log(2.0) + 17 * std::log(10.0)));
  CHECK_THROWS(negligible_log_odds_for(9, 0.0));
  CHECK_THROWS(negligible_log_odds_for(-1, 0.5));
}
