// Model space: model priors (closed forms, normalisation), the fast sinh-trapezoid log marginal
// against the adaptive Gauss–Kronrod quadrature of bayes_factor.cpp and the independent
// long-double oracle, BAS's ZS Laplace approximation, shrinkage in [0, 1] at the extremes.
#include "dpmu/core/model_space.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "bayes_factor_oracle.hpp"
#include "dpmu/core/log_math.hpp"

using namespace dpmu::core;

namespace {
double log_choose(int p, int k) { return std::lgamma(p + 1.0) - std::lgamma(k + 1.0) - std::lgamma(p - k + 1.0); }
}  // namespace

TEST_CASE("model priors sum to one and divide size priors by C(p, k)", "[bma][model_space]") {
  for (const char* text : {"uniform", "bernoulli:0.2", "beta-binomial:1,1", "beta-binomial:2,5"}) {
    const ModelPrior prior = parse_model_prior(text);
    for (int p : {1, 5, 12}) {
      std::vector<double> terms;
      for (int k = 0; k <= p; ++k) terms.push_back(log_choose(p, k) + log_prior_model_probability(prior, k, p));
      INFO(text << " p=" << p);
      CHECK(std::abs(log_sum_exp(terms)) < 1e-12);
    }
  }
  // Beta-binomial(1,1) = 1/((p+1) C(p,k)): every model size gets mass 1/(p+1).
  const ModelPrior bb = parse_model_prior("beta-binomial:1,1");
  for (int k = 0; k <= 7; ++k) {
    CHECK(log_prior_model_probability(bb, k, 7) == Approx(-std::log(8.0) - log_choose(7, k)).epsilon(1e-13));
  }
  CHECK(log_prior_model_probability(parse_model_prior("bernoulli:0.2"), 2, 5) ==
        Approx(2 * std::log(0.2) + 3 * std::log(0.8)).epsilon(1e-14));
  CHECK(log_prior_model_probability(parse_model_prior("uniform"), 2, 5) == Approx(-5 * std::log(2.0)));
  CHECK(to_string(parse_model_prior("beta-binomial")) == "beta-binomial:1,1");
  CHECK(to_string(parse_model_prior("bernoulli(0.3)")) == "bernoulli:0.29999999999999999");
}

TEST_CASE("bad model priors are rejected with the parameter named", "[bma][model_space]") {
  CHECK_THROWS_WITH(parse_model_prior("bernoulli:1.5"), Catch::Contains("w is 1.5"));
  CHECK_THROWS_WITH(parse_model_prior("beta-binomial:0,1"), Catch::Contains("a is 0"));
  CHECK_THROWS_AS(parse_model_prior("poisson:2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_model_prior("bernoulli:x"), std::invalid_argument);
  CHECK_THROWS_AS(log_prior_model_probability(parse_model_prior("uniform"), 6, 5), std::domain_error);
}

TEST_CASE("sinh-trapezoid log marginal equals the adaptive quadrature to 1e-9", "[bma][model_space]") {
  double worst_lb = 0.0;
  double worst_s = 0.0;
  for (PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n}) {
    Prior prior;
    prior.kind = kind;
    for (double n : {10.0, 30.0, 200.0, 5000.0, 1e5, 1e7}) {
      for (int k : {1, 2, 5, 8, 20}) {
        if (n <= k + 2) continue;
        for (double r2 : {0.0, 1e-9, 1e-4, 0.01, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9, 1 - 1e-12}) {
          const double lq = r2 > 0.5 ? std::log(1 - r2) : std::log1p(-r2);
          const auto slow = log_bayes_factor_and_shrinkage(prior, lq, n, k, 1);
          const auto fast = log_bayes_factor_sinh_trapezoid(prior, lq, n, k, 1);
          INFO(to_string(kind) << " n=" << n << " k=" << k << " r2=" << r2);
          const double err = std::abs(slow.log_bayes_factor - fast.log_bayes_factor);
          REQUIRE(err < 1e-9 + 1e-13 * std::abs(slow.log_bayes_factor));
          REQUIRE(std::abs(slow.shrinkage - fast.shrinkage) < 1e-9);
          REQUIRE(fast.shrinkage >= 0.0);
          REQUIRE(fast.shrinkage <= 1.0);
          worst_lb = std::max(worst_lb, err);
          worst_s = std::max(worst_s, std::abs(slow.shrinkage - fast.shrinkage));
        }
      }
    }
  }
  WARN("max |Δ log B| = " << worst_lb << ", max |Δ shrinkage| = " << worst_s);
}

TEST_CASE("robust-prior trapezoid equals the adaptive quadrature to 1e-9", "[bma][model_space]") {
  Prior robust;
  robust.kind = PriorKind::robust;
  double worst = 0.0;
  for (double n : {10.0, 30.0, 200.0, 5000.0, 1e5, 1e7}) {
    for (int k : {1, 2, 5, 8, 20}) {
      if (n <= k + 2) continue;
      for (double r2 : {0.0, 1e-9, 1e-4, 0.01, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9, 1 - 1e-12}) {
        const double lq = r2 > 0.5 ? std::log(1 - r2) : std::log1p(-r2);
        const auto slow = log_bayes_factor_and_shrinkage(robust, lq, n, k, 1);
        const auto fast = log_bayes_factor_robust_trapezoid(lq, n, k, 1);
        INFO("n=" << n << " k=" << k << " r2=" << r2 << " slow " << slow.log_bayes_factor << " fast "
                  << fast.log_bayes_factor);
        REQUIRE(std::abs(slow.log_bayes_factor - fast.log_bayes_factor) <
                1e-9 + 1e-13 * std::abs(slow.log_bayes_factor));
        REQUIRE(std::abs(slow.shrinkage - fast.shrinkage) < 1e-9);
        worst = std::max(worst, std::abs(slow.log_bayes_factor - fast.log_bayes_factor));
      }
    }
  }
  // and the closed form (docs/methods.md §2.2) at moderate n
  for (double r2 : {0.05, 0.3}) {
    CHECK(log_bayes_factor_robust_trapezoid(std::log1p(-r2), 100, 3, 1).log_bayes_factor ==
          Approx(log_bayes_factor_robust_closed_form(r2, 100, 3, 1)).epsilon(1e-10));
  }
  WARN("robust: max |Δ log B| = " << worst);
}

TEST_CASE("sinh-trapezoid agrees with the independent long-double oracle", "[bma][model_space]") {
  for (PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n}) {
    Prior prior;
    prior.kind = kind;
    for (double n : {50.0, 1e4, 1e7}) {
      for (double r2 : {1e-3, 0.3, 0.99}) {
        const double lq = std::log1p(-r2);
        const auto fast = log_bayes_factor_sinh_trapezoid(prior, lq, n, 3, 1);
        const double ref = dpmu::test::oracle_log_bayes_factor(kind, lq, n, 3, 1, 3.0);
        INFO(to_string(kind) << " n=" << n << " r2=" << r2);
        CHECK(std::abs(fast.log_bayes_factor - ref) < 1e-8 + 1e-12 * std::abs(fast.log_bayes_factor));
      }
    }
  }
}

TEST_CASE("log_model_marginal dispatches every prior, shrinkage stays in [0, 1] at R² → 0 and → 1",
          "[bma][model_space]") {
  for (const char* name :
       {"g-prior", "zellner-siow", "zellner-siow-laplace", "hyper-g", "hyper-g-n", "robust", "bic", "aic", "lr"}) {
    const CoefficientPrior cp = parse_coefficient_prior(name);
    CHECK(to_string(cp) == name);
    for (double n : {20.0, 1e4, 1e7}) {
      for (int k : {1, 4}) {
        for (double lq : {0.0, -1e-15, -1e-6, -0.5, -20.0, -27.6}) {
          const auto r = log_model_marginal(cp, lq, n, k, 1);
          INFO(name << " n=" << n << " k=" << k << " lq=" << lq);
          REQUIRE(std::isfinite(r.log_bayes_factor));
          REQUIRE(r.shrinkage >= 0.0);
          REQUIRE(r.shrinkage <= 1.0);
        }
      }
    }
    CHECK(log_model_marginal(cp, 0.0, 100, 0, 1).log_bayes_factor == 0.0);
  }
  // information criteria: shrinkage 1 and log I of information_criteria.hpp
  const auto bic = log_model_marginal(parse_coefficient_prior("bic"), -0.2, 100, 3, 1);
  CHECK(bic.shrinkage == 1.0);
  CHECK(bic.log_bayes_factor == Approx(0.1 * 100 - 1.5 * std::log(100.0)).epsilon(1e-14));
  CHECK_THROWS_AS(log_model_marginal(parse_coefficient_prior("zellner-siow"), 0.1, 100, 3, 1), std::domain_error);
  CHECK_THROWS_AS(log_model_marginal(parse_coefficient_prior("zellner-siow"), -0.1, 4, 3, 1), std::domain_error);
  CHECK_THROWS_AS(parse_coefficient_prior("zellner"), std::invalid_argument);
}

TEST_CASE("ZS Laplace approximation (BAS ZS-null) is close to, but not equal to, the exact integral",
          "[bma][model_space]") {
  Prior zs;
  zs.kind = PriorKind::zellner_siow;
  // Large n: still close (the approximation is in g, not log g, so the error does not vanish fast).
  {
    const double lq = std::log1p(-0.05);
    const auto exact = log_bayes_factor_and_shrinkage(zs, lq, 1e6, 3, 1);
    const auto approx = zellner_siow_laplace(0.05, 1e6, 3);
    CHECK(std::abs(exact.log_bayes_factor - approx.log_bayes_factor) < 1.0);
    CHECK(std::abs(exact.shrinkage - approx.shrinkage) < 1e-2);
  }
  // HSB2-sized one-predictor model: the two differ by O(0.1–1) in log marginal (documented in docs/bma.md).
  {
    const double r2 = 0.35;
    const auto exact = log_bayes_factor_and_shrinkage(zs, std::log1p(-r2), 200, 1, 1);
    const auto approx = zellner_siow_laplace(r2, 200, 1);
    const double diff = approx.log_bayes_factor - exact.log_bayes_factor;
    WARN("ZS Laplace - exact, n = 200, k = 1, R² = 0.35: " << diff);
    CHECK(std::abs(diff) > 1e-3);
    CHECK(std::abs(diff) < 2.0);
  }
}

TEST_CASE("hyper-g and hyper-g/n with a huge a tend to log B = 0, never NaN (both quadratures)",
          "[bma][model_space][bayes_factor]") {
  // a >= 1e50 gave log B = +-inf/NaN and a definite P(H1) of 1 or 0.
  for (const double a : {1e20, 1e30, 1e50, 1e100, 1e300, 1.7e308}) {
    for (const PriorKind kind : {PriorKind::hyper_g, PriorKind::hyper_g_n}) {
      for (const double r2 : {0.0, 0.3, 0.999999}) {
        for (const double n : {20.0, 200.0, 1e6}) {
          INFO("a=" << a << " kind=" << to_string(kind) << " R2=" << r2 << " n=" << n);
          Prior prior;
          prior.kind = kind;
          prior.a = a;
          const double log_q = std::log1p(-r2);
          const auto fast = log_model_marginal(CoefficientPrior{prior}, log_q, n, 2, 1);
          const auto slow = log_bayes_factor_and_shrinkage(prior, log_q, n, 2, 1);
          // log B = log E_g[(1+g)^{(m-k)/2} (1+gQ)^{-m/2}] with g ~ 2/a (hyper-g) or 2n/a: O(n^2/a) at most
          const double bound = 1e-10 + 10.0 * n * n * (kind == PriorKind::hyper_g_n ? n : 1.0) / a;
          CHECK(std::isfinite(fast.log_bayes_factor));
          CHECK(std::isfinite(slow.log_bayes_factor));
          CHECK(std::abs(fast.log_bayes_factor) <= bound);
          CHECK(std::abs(slow.log_bayes_factor) <= bound);
          CHECK(fast.shrinkage >= 0.0);
          CHECK(fast.shrinkage <= std::min(1.0, bound));
          CHECK(slow.shrinkage <= std::min(1.0, bound));
          CHECK(fast.log_bayes_factor == Approx(slow.log_bayes_factor).margin(1e-9));
        }
      }
    }
  }
}

TEST_CASE("the g-prior has a finite exact-fit limit, the other priors have none", "[bma][model_space]") {
  const auto gp = parse_coefficient_prior("g-prior");
  const auto lim = log_model_marginal_exact_fit(gp, 100.0, 2, 1);
  REQUIRE(lim.has_value());
  CHECK(lim->log_bayes_factor == Approx(0.5 * (100 - 1 - 2) * std::log(101.0)).epsilon(1e-15));
  CHECK(lim->shrinkage == Approx(100.0 / 101.0));
  // the limit of the closed form as R² -> 1
  const auto near = log_model_marginal(gp, std::log(1e-300), 100.0, 2, 1);
  CHECK(near.log_bayes_factor == Approx(lim->log_bayes_factor).epsilon(1e-12));
  const auto g5 = parse_coefficient_prior("g-prior", 5.0);
  CHECK(log_model_marginal_exact_fit(g5, 100.0, 2, 1)->log_bayes_factor == Approx(0.5 * 97 * std::log(6.0)));
  for (const char* name :
       {"zellner-siow", "zellner-siow-laplace", "hyper-g", "hyper-g-n", "robust", "bic", "aic", "lr"}) {
    INFO(name);
    CHECK(!log_model_marginal_exact_fit(parse_coefficient_prior(name), 100.0, 2, 1).has_value());
    CHECK(!exact_fit_has_finite_evidence(parse_coefficient_prior(name)));
  }
}

TEST_CASE("mixture priors follow the R² → 1 limit of log B beyond log(1 − R²) = −80, fast and adaptive rules",
          "[bma][model_space]") {
  // As Q = 1 − R² → 0 the mass moves to g ≈ 1/Q, where a prior with tail π(g) ≈ C g^−β gives
  // (substituting g = v/Q in Eq. 3, m = n − 1) log B = log C − a log Q + log Beta(a, b) + O(Q), with
  // a = (m − k)/2 − β + 1 and b = k/2 + β − 1: zellner-siow β = 3/2, C = (n/2)^½/Γ(½); hyper-g(a = 3)
  // β = 3/2, C = ½; hyper-g-n(a = 3) β = 3/2, C = n^{3/2}/(2n) = √n/2. Before the Newton bracket
  // followed log Q, every log Q below about −80 gave the value at t = 80 (log B stuck).
  const auto lbeta = [](double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); };
  for (PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n}) {
    Prior prior;
    prior.kind = kind;
    prior.a = 3.0;
    for (double n : {1e3, 1e7}) {
      const double m = n - 1;
      const double log_c = kind == PriorKind::zellner_siow ? 0.5 * std::log(0.5 * n) - 0.5 * std::log(std::numbers::pi)
                           : kind == PriorKind::hyper_g    ? std::log(0.5)
                                                           : std::log(0.5 * std::sqrt(n));
      for (int k : {1, 3, 8}) {
        const double a = (m - k) / 2 - 0.5;
        const double b = k / 2.0 + 0.5;
        for (double lq : {-60.0, -100.0, -300.0, -700.5, -1000.0}) {
          const double limit = log_c - a * lq + lbeta(a, b);
          const auto fast = log_bayes_factor_sinh_trapezoid(prior, lq, n, k, 1);
          INFO(to_string(kind) << " n=" << n << " k=" << k << " log(1-R2)=" << lq);
          CHECK(fast.log_bayes_factor == Approx(limit).epsilon(1e-12));
          CHECK(fast.shrinkage == Approx(1.0).margin(1e-12));
        }
      }
    }
  }
  // The adaptive reference (bayes_factor.hpp) agrees there too (it returned +inf below about −90),
  // and refuses a log(1 − R²) no double-precision sums of squares give instead of scanning forever.
  for (PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::robust}) {
    Prior prior;
    prior.kind = kind;
    for (double lq : {-100.0, -700.5, -1000.0}) {
      const auto slow = log_bayes_factor_and_shrinkage(prior, lq, 1000.0, 3, 1);
      const auto fast = kind == PriorKind::robust ? log_bayes_factor_robust_trapezoid(lq, 1000.0, 3, 1)
                                                  : log_bayes_factor_sinh_trapezoid(prior, lq, 1000.0, 3, 1);
      INFO(to_string(kind) << " log(1-R2)=" << lq);
      CHECK(slow.log_bayes_factor == Approx(fast.log_bayes_factor).epsilon(1e-12));
    }
    CHECK_THROWS_AS(log_bayes_factor(prior, -1e5, 1000.0, 3, 1), std::domain_error);
  }
  // robust (support g > ρ(n + 1) − 1, the other rule): the same slope −a = −(m − k − 1)/2 in log Q.
  for (double n : {1e3, 1e7}) {
    for (int k : {1, 8}) {
      const double b100 = log_bayes_factor_robust_trapezoid(-100.0, n, k, 1).log_bayes_factor;
      const double b700 = log_bayes_factor_robust_trapezoid(-700.5, n, k, 1).log_bayes_factor;
      INFO("robust n=" << n << " k=" << k);
      CHECK((b700 - b100) / 600.5 == Approx((n - 1 - k - 1) / 2).epsilon(1e-12));
    }
  }
}
