// log B10 of paper Eq. (3) against independent values: 30–40 digit mpmath quadrature
// (docs/methods.md §7 table), closed forms (hyper-g and robust via 2F1), and an independent
// long-double quadrature (bayes_factor_oracle.hpp) over n = 10 … 1e7, p = 1 … 50, R² ∈ [0, 1 - 1e-12].
#include "dpmu/core/bayes_factor.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "bayes_factor_oracle.hpp"
#include "dpmu/core/log_math.hpp"

using dpmu::core::BayesFactorResult;
using dpmu::core::Prior;
using dpmu::core::PriorKind;

namespace {
Prior make_prior(PriorKind kind, double a = 3.0) {
  Prior p;
  p.kind = kind;
  p.a = a;
  return p;
}
double log_q_of(double r2) { return std::log1p(-r2); }
// The accuracy requirement: |error| ≤ 1e-8 + 1e-12 |log B10|.
double tolerance(double log_b) { return 1e-8 + 1e-12 * std::abs(log_b); }
}  // namespace

TEST_CASE("log B10 matches high-precision reference values (docs/methods.md §7)", "[bayes_factor]") {
  struct Case {
    double r2, n;
    int k, p0;
    PriorKind kind;
    double a;
    double log_b, shrinkage;  // shrinkage < 0: not given
  };
  const Case cases[] = {
      {0.3, 50, 3, 1, PriorKind::g_prior, 3, 2.6357755605, 0.9803921569},
      {0.3, 50, 3, 1, PriorKind::zellner_siow, 3, 2.6093989253, 0.9473960066},
      {0.3, 50, 3, 1, PriorKind::hyper_g, 3, 3.4669305444, 0.7853653248},
      {0.3, 50, 3, 1, PriorKind::hyper_g, 4, 3.3248082591, 0.7279332408},
      {0.3, 50, 3, 1, PriorKind::hyper_g_n, 3, 2.639601071, 0.905228997},
      {0.3, 50, 3, 1, PriorKind::robust, 3, 3.0104546997, 0.9514072437},
      {0.05, 200, 2, 2, PriorKind::g_prior, 3, -0.2511883868, 0.9950248756},
      {0.05, 200, 2, 2, PriorKind::zellner_siow, 3, -0.3087726095, 0.986165786},
      {0.05, 200, 2, 2, PriorKind::hyper_g, 3, 1.7886511044, 0.7219881382},
      {0.05, 200, 2, 2, PriorKind::hyper_g, 4, 1.7660003665, 0.6397949214},
      {0.05, 200, 2, 2, PriorKind::hyper_g_n, 3, 0.052297747, 0.9345579298},
      {0.05, 200, 2, 2, PriorKind::robust, 3, 0.00059065254, 0.9882017531},
      {0.01, 100, 1, 1, PriorKind::g_prior, 3, -1.8150188812, 0.9900990099},
      {0.01, 100, 1, 1, PriorKind::zellner_siow, 3, -2.0501364317, 0.9810998333},
      {0.01, 100, 1, 1, PriorKind::hyper_g, 3, -0.4345251464, 0.5412943177},
      {0.01, 100, 1, 1, PriorKind::hyper_g, 4, -0.1983063481, 0.4347571870},
      {0.01, 100, 1, 1, PriorKind::hyper_g_n, 3, -1.942609009, 0.9212780444},
      {0.01, 100, 1, 1, PriorKind::robust, 3, -2.1615883052, 0.9901153465},
      {0.6, 1000, 5, 1, PriorKind::g_prior, 3, 439.66739238, 0.9990009990},
      {0.6, 1000, 5, 1, PriorKind::zellner_siow, 3, 439.52846578, -1},
      {0.6, 1000, 5, 1, PriorKind::hyper_g, 3, 437.84204262, 0.9959636731},
      {0.6, 1000, 5, 1, PriorKind::hyper_g, 4, 435.73724772, 0.9952861953},
      {0.6, 1000, 5, 1, PriorKind::robust, 3, 440.20339209, -1},
      {1e-7, 1e7, 4, 1, PriorKind::zellner_siow, 3, -30.6375802885, -1},
      {5e-4, 1e7, 9, 1, PriorKind::zellner_siow, 3, 2433.815874, -1},
  };
  for (const auto& c : cases) {
    INFO(std::string(dpmu::core::to_string(c.kind))
         << " a=" << c.a << " R2=" << c.r2 << " n=" << c.n << " k=" << c.k << " p0=" << c.p0);
    const BayesFactorResult r =
        dpmu::core::log_bayes_factor_and_shrinkage(make_prior(c.kind, c.a), log_q_of(c.r2), c.n, c.k, c.p0);
    // The references are printed with 8–10 significant digits: compare to their last digit.
    const double digits_tol = c.n >= 1e7 && c.log_b > 1000 ? 1e-6 : (std::abs(c.log_b) > 100 ? 1e-8 : 1e-9);
    CHECK(r.log_bayes_factor == Approx(c.log_b).margin(digits_tol).epsilon(0));
    if (c.shrinkage >= 0) CHECK(r.shrinkage == Approx(c.shrinkage).margin(1e-9).epsilon(0));
    CHECK(dpmu::core::log_bayes_factor(make_prior(c.kind, c.a), log_q_of(c.r2), c.n, c.k, c.p0) == r.log_bayes_factor);
  }
}

TEST_CASE("closed forms (hyper-g, robust via 2F1) agree with quadrature of Eq. (3)", "[bayes_factor]") {
  for (double n : {20.0, 50.0, 200.0, 1000.0}) {
    for (int k : {1, 3, 8}) {
      for (int p0 : {1, 2}) {
        for (double r2 : {0.0, 1e-6, 0.01, 0.1, 0.3, 0.6}) {
          if (n * r2 > 400) continue;  // 2F1 series overflows a double beyond this
          const double log_q = log_q_of(r2);
          INFO("n=" << n << " k=" << k << " p0=" << p0 << " R2=" << r2);
          for (double a : {3.0, 4.0}) {
            const double quad = dpmu::core::log_bayes_factor(make_prior(PriorKind::hyper_g, a), log_q, n, k, p0);
            const double closed = dpmu::core::log_bayes_factor_hyper_g_closed_form(r2, n, k, p0, a);
            CHECK(quad == Approx(closed).margin(tolerance(closed)).epsilon(0));
          }
          const double quad = dpmu::core::log_bayes_factor(make_prior(PriorKind::robust), log_q, n, k, p0);
          const double closed = dpmu::core::log_bayes_factor_robust_closed_form(r2, n, k, p0);
          CHECK(quad == Approx(closed).margin(tolerance(closed)).epsilon(0));
        }
      }
    }
  }
}

TEST_CASE("mixture-prior log B10 agrees with an independent quadrature from n = 10 to 1e7", "[bayes_factor]") {
  const PriorKind kinds[] = {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n, PriorKind::robust};
  const double r2s[] = {0.0, 1e-9, 1e-4, 0.05, 0.5, 0.9, 0.999, 1 - 1e-6, 1 - 1e-12};
  int checked = 0;
  for (double n : {10.0, 100.0, 1e4, 1e7}) {
    for (int k : {1, 5, 20, 50}) {
      for (int p0 : {1, 2}) {
        if (n <= k + p0 + 1) continue;
        for (double r2 : r2s) {
          // log(1 - R²) as fit_nested_models delivers it: exact for R² = 1 - 1e-12 too.
          const double log_q = r2 > 0.5 ? std::log(1.0 - r2) : std::log1p(-r2);
          for (PriorKind kind : kinds) {
            const double ours = dpmu::core::log_bayes_factor(make_prior(kind), log_q, n, k, p0);
            const double ref = dpmu::test::oracle_log_bayes_factor(kind, log_q, n, k, p0);
            INFO(dpmu::core::to_string(kind)
                 << " n=" << n << " k=" << k << " p0=" << p0 << " R2=" << r2 << " ours=" << ours << " oracle=" << ref);
            REQUIRE(std::isfinite(ours));
            CHECK(std::abs(ours - ref) <= tolerance(ref));
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("g-prior closed form equals the long-double textbook formula", "[bayes_factor]") {
  for (double n : {10.0, 1e3, 1e7}) {
    for (double r2 : {0.0, 0.3, 1 - 1e-12}) {
      for (double g : {1.0, n, 1e9}) {
        const int k = 3, p0 = 1;
        const double log_q = r2 > 0.5 ? std::log(1.0 - r2) : std::log1p(-r2);
        Prior prior = make_prior(PriorKind::g_prior);
        prior.g = g;
        const long double m = n - p0;
        const long double ref =
            ((m - k) / 2) * std::log1p(static_cast<long double>(g)) -
            (m / 2) * std::log1p(static_cast<long double>(g) * std::exp(static_cast<long double>(log_q)));
        const auto r = dpmu::core::log_bayes_factor_and_shrinkage(prior, log_q, n, k, p0);
        CHECK(std::abs(r.log_bayes_factor - static_cast<double>(ref)) <=
              tolerance(static_cast<double>(ref)) + 1e-15L * m);
        CHECK(r.shrinkage == Approx(g / (1 + g)));
      }
    }
  }
}

TEST_CASE("shrinkage E[g/(1+g)|Y] stays in [0,1] and log B10 increases with R²", "[bayes_factor]") {
  const PriorKind kinds[] = {PriorKind::g_prior, PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n,
                             PriorKind::robust};
  for (PriorKind kind : kinds) {
    for (double n : {12.0, 1e3, 1e7}) {
      double previous = -std::numeric_limits<double>::infinity();
      for (double r2 : {0.0, 1e-8, 1e-3, 0.2, 0.8, 1 - 1e-9, 1 - 1e-12}) {
        const double log_q = r2 > 0.5 ? std::log(1.0 - r2) : std::log1p(-r2);
        const auto r = dpmu::core::log_bayes_factor_and_shrinkage(make_prior(kind), log_q, n, 2, 1);
        INFO(dpmu::core::to_string(kind) << " n=" << n << " R2=" << r2);
        CHECK(r.shrinkage >= 0.0);
        CHECK(r.shrinkage <= 1.0);
        CHECK(r.log_bayes_factor > previous);
        previous = r.log_bayes_factor;
      }
    }
  }
}

TEST_CASE("log B10 at n = 1e7 is finite where B10 itself overflows", "[bayes_factor]") {
  const double log_q = std::log(1e-12);  // R² = 1 - 1e-12
  for (PriorKind kind : {PriorKind::g_prior, PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::robust}) {
    const double lb = dpmu::core::log_bayes_factor(make_prior(kind), log_q, 1e7, 3, 1);
    CHECK(std::isfinite(lb));
    // -(m/2) log Q ≈ 1.38e8; the fixed g = n prior pays -(m/2) log((1+nQ)/(1+n)) ≈ 8.06e7
    CHECK(lb > 8e7);
    CHECK(std::isinf(std::exp(lb)));
  }
}

TEST_CASE("p = 0 gives log B10 = 0", "[bayes_factor]") {
  CHECK(dpmu::core::log_bayes_factor(make_prior(PriorKind::zellner_siow), -0.1, 100, 0, 1) == 0.0);
}

TEST_CASE("log_bayes_factor rejects invalid arguments with a clear message", "[bayes_factor]") {
  using Catch::Matchers::Contains;
  const Prior zs = make_prior(PriorKind::zellner_siow);
  CHECK_THROWS_WITH(dpmu::core::log_bayes_factor(zs, 0.1, 100, 1, 1), Contains("log_one_minus_r_squared is 0.1"));
  CHECK_THROWS_WITH(dpmu::core::log_bayes_factor(zs, std::nan(""), 100, 1, 1), Contains("finite and <= 0"));
  CHECK_THROWS_WITH(dpmu::core::log_bayes_factor(zs, -0.1, 2, 1, 1),
                    Contains("n is 2, but must be finite and > p + p0 = 2"));
  CHECK_THROWS_AS(dpmu::core::log_bayes_factor(make_prior(PriorKind::bic), -0.1, 100, 1, 1), std::invalid_argument);
  CHECK_THROWS_WITH(dpmu::core::log_bayes_factor(make_prior(PriorKind::hyper_g, 2.0), -0.1, 100, 1, 1),
                    Contains("a is 2, but must be finite and > 2"));
  Prior g0 = make_prior(PriorKind::g_prior);
  g0.g = -1.0;
  CHECK_THROWS_WITH(dpmu::core::log_bayes_factor(g0, -0.1, 100, 1, 1), Contains("g is -1"));
  CHECK_THROWS_WITH(dpmu::core::parse_prior_kind("zelner"), Contains("unknown prior 'zelner'"));
  CHECK(dpmu::core::parse_prior_kind("hyper_g_n") == PriorKind::hyper_g_n);
}
