// The ledger's composition arithmetic (core/composition.hpp) against independent values: the GDP
// profile against numeric integration of the Gaussian privacy-loss distribution, the 10 × (0.5,
// 1e-6) example recomputed with Boost.Math alone, KOV Theorem 3.3 against its formula in exact
// integer arithmetic, the heterogeneous and mixed bounds against brute-force exact profiles of
// randomized response (the worst ε-DP pair), and the properties every accountant must have.
#include "dpmu/core/composition.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/tools/roots.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dpmu/core/mechanisms.hpp"
#include "dpmu/core/secure_noise.hpp"

namespace core = dpmu::core;

namespace {

/// Φ by Boost.Math (independent of dpmu's log-space evaluation).
double normal_cdf(double x) { return boost::math::cdf(boost::math::normal(), x); }

/// δ_μ(ε) for any real ε by the closed form with Boost's Φ (plain, not log-space).
double gdp_delta_direct(double mu, double epsilon) {
  return normal_cdf(-epsilon / mu + mu / 2.0) - std::exp(epsilon) * normal_cdf(-epsilon / mu - mu / 2.0);
}

/// δ(ε) = E[(1 − e^(ε − L))_+] for the privacy loss L ~ N(μ²/2, μ²) of a Gaussian pair, by
/// exp-sinh quadrature over L ∈ [ε, ∞) (the definition, not the closed form).
double gdp_delta_by_integration(double mu, double epsilon) {
  const double mean = mu * mu / 2.0;
  const auto integrand = [&](double x) {  // L = ε + x
    const double z = (epsilon + x - mean) / mu;
    return -std::expm1(-x) * std::exp(-0.5 * z * z) / (mu * std::sqrt(2.0 * M_PI));
  };
  boost::math::quadrature::exp_sinh<double> integrator;
  return integrator.integrate(integrand, 0.0, std::numeric_limits<double>::infinity());
}

/// Smallest x in [lo, hi] with f(x) ≤ target for decreasing f, by bisection (200 halvings).
template <class F>
double bisect_decreasing(F f, double target, double lo, double hi) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > target ? lo : hi) = mid;
  }
  return hi;
}

/// Exact privacy profile of the composition of randomized responses with parameters ε_ℓ (each the
/// dominating pair of ε_ℓ-DP, KOV Theorem 2.4) and, optionally, one Gaussian pair of parameter mu:
/// enumerate the 2^k outcomes (s_ℓ = ±1), δ(ε) = Σ_s P(s) δ_G(ε − Σ s_ℓ ε_ℓ) where δ_G(x) = 1{x < 0}(1 − e^x)
/// without a Gaussian (a point mass), else the GDP profile at x.
double brute_force_delta(const std::vector<double>& eps, double mu, double epsilon) {
  const std::size_t k = eps.size();
  double delta = 0.0;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << k); ++mask) {
    double prob = 1.0, loss = 0.0;
    for (std::size_t l = 0; l < k; ++l) {
      const double p = std::exp(eps[l]) / (1.0 + std::exp(eps[l]));
      const bool plus = (mask >> l) & 1U;
      prob *= plus ? p : 1.0 - p;
      loss += plus ? eps[l] : -eps[l];
    }
    const double x = epsilon - loss;
    delta += prob * (mu > 0.0 ? gdp_delta_direct(mu, x) : (x < 0.0 ? -std::expm1(x) : 0.0));
  }
  return delta;
}

}  // namespace

TEST_CASE("composition: the GDP profile equals numeric integration of the privacy-loss distribution", "[composition]") {
  for (const double mu : {0.05, 0.124, 0.5, 1.0, 2.0, 4.0}) {
    for (const double epsilon : {0.0, 0.05, 0.5, 1.0, 2.0, 4.0, 8.0}) {
      const double exact = gdp_delta_by_integration(mu, epsilon);
      if (exact < 1e-14) continue;
      INFO("mu " << mu << " epsilon " << epsilon);
      CHECK(core::gaussian_dp_delta(mu, epsilon) == Approx(exact).epsilon(1e-8));
    }
  }
  // The analytic Gaussian's δ is the same function of μ = Δ2/σ.
  CHECK(core::analytic_gaussian_delta(2.0, 0.7, 0.5) == core::gaussian_dp_delta(0.25, 0.7));
}

TEST_CASE("composition: GDP epsilon and the analytic Gaussian's mu invert the profile", "[composition]") {
  for (const double mu : {0.01, 0.124, 0.4, 1.0, 3.0}) {
    for (const double delta : {1e-12, 1e-8, 1e-5, 1e-3, 0.05}) {
      INFO("mu " << mu << " delta " << delta);
      const double epsilon = core::gaussian_dp_epsilon(mu, delta);
      if (epsilon == 0.0) {
        CHECK(core::gaussian_dp_delta(mu, 0.0) <= delta);
        continue;
      }
      CHECK(core::gaussian_dp_delta(mu, epsilon) == Approx(delta).epsilon(1e-9));
      CHECK(core::gaussian_dp_delta(mu, epsilon) <= delta * (1 + 1e-12));  // the upper end of the root
    }
  }
  CHECK(std::isinf(core::gaussian_dp_epsilon(0.5, 0.0)));
  for (const double epsilon : {0.1, 0.5, 1.0, 5.0}) {
    for (const double delta : {1e-10, 1e-6, 1e-2}) {
      const double mu = core::analytic_gaussian_mu(epsilon, delta);
      CHECK(core::gaussian_dp_delta(mu, epsilon) == Approx(delta).epsilon(1e-9));
      CHECK(mu == Approx(1.0 / core::analytic_gaussian_sigma(epsilon, delta, 1.0)).epsilon(1e-15));
    }
  }
  CHECK_THROWS_AS(core::gaussian_dp_epsilon(0.0, 1e-5), std::domain_error);
  CHECK_THROWS_AS(core::gaussian_dp_epsilon(1.0, 1.0), std::domain_error);
}

TEST_CASE("composition: 10 analytic-Gaussian releases at (0.5, 1e-6) total epsilon 1.52 at delta 1e-5",
          "[composition]") {
  // Independently, with Boost.Math's Φ and bisection only: μ of one release, μ_total = √10 μ, ε at 1e-5.
  const double mu_one = bisect_decreasing([](double mu) { return -gdp_delta_direct(mu, 0.5); }, -1e-6, 1e-3, 5.0);
  const double mu_total = std::sqrt(10.0) * mu_one;
  const double reference = bisect_decreasing([&](double e) { return gdp_delta_direct(mu_total, e); }, 1e-5, 0.0, 20.0);
  CHECK(reference == Approx(1.5225256).margin(1e-6));  // also scipy: 1.5225256066968

  core::CompositionInput in;
  for (int i = 0; i < 10; ++i) {
    in.gaussian_mu.push_back(core::analytic_gaussian_mu(0.5, 1e-6));
    in.gaussian_epsilon_delta.emplace_back(0.5, 1e-6);
  }
  const core::CompositionTotal t = core::tight_composition(in, 1e-5);
  CHECK(t.gaussian_mu == Approx(mu_total).epsilon(1e-9));
  CHECK(t.epsilon == Approx(reference).epsilon(1e-8));
  CHECK(t.epsilon == Approx(1.52).margin(0.005));
  CHECK(t.delta == 1e-5);
  CHECK_FALSE(t.basic_was_smaller);
  // Basic composition: ε = 5.0 at δ = 1e-5 (the comparison in docs/privacy.md "Accountants").
  CHECK(10 * 0.5 == 5.0);
}

TEST_CASE("composition: KOV Theorem 3.3 equals its formula evaluated exactly (epsilon0 = log 2)", "[composition]") {
  // With e^ε0 = 2: δ_i = Σ_{ℓ<i} C(k,ℓ)(2^(k−ℓ) − 2^(k−2i+ℓ)) / 3^k, an integer over 3^k.
  const double eps0 = std::log(2.0);
  for (std::size_t k = 1; k <= 12; ++k) {
    std::int64_t three_k = 1;
    for (std::size_t j = 0; j < k; ++j) three_k *= 3;
    for (std::size_t i = 0; 2 * i <= k; ++i) {
      std::int64_t numerator = 0;
      std::int64_t choose = 1;  // C(k, ℓ)
      for (std::size_t l = 0; l < i; ++l) {
        numerator += choose * ((std::int64_t{1} << (k - l)) - (std::int64_t{1} << (k - 2 * i + l)));
        choose = choose * static_cast<std::int64_t>(k - l) / static_cast<std::int64_t>(l + 1);
      }
      const double exact = static_cast<double>(numerator) / static_cast<double>(three_k);
      const double epsilon = static_cast<double>(k - 2 * i) * eps0;
      INFO("k " << k << " i " << i);
      CHECK(core::pure_composition_delta(eps0, k, epsilon) == Approx(exact).epsilon(1e-12).margin(1e-300));
      if (exact > 0.0) {
        CHECK(core::pure_composition_epsilon(eps0, k, exact) == Approx(epsilon).epsilon(1e-9).margin(1e-12));
      }
    }
    CHECK(core::pure_composition_epsilon(eps0, k, 0.0) == Approx(static_cast<double>(k) * eps0));
  }
  // Brute force over the 2^k outcomes of k randomized responses, other ε0 and ε between the steps.
  for (const double e0 : {0.1, 0.5, 1.3}) {
    for (std::size_t k : {1u, 2u, 5u, 9u}) {
      const std::vector<double> eps(k, e0);
      for (const double epsilon : {0.0, 0.07, 0.33, 1.0, 2.5}) {
        CHECK(core::pure_composition_delta(e0, k, epsilon) ==
              Approx(brute_force_delta(eps, 0.0, epsilon)).epsilon(1e-11).margin(1e-300));
      }
    }
  }
}

TEST_CASE("composition: heterogeneous pure releases, KOV Theorem 3.5 is never below the exact optimum",
          "[composition]") {
  std::mt19937_64 rng(20261207);
  std::uniform_real_distribution<double> unif(0.05, 1.5);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t k = 2 + trial % 9;
    std::vector<double> eps(k);
    for (auto& e : eps) e = unif(rng);
    for (const double delta : {1e-6, 1e-3, 0.05}) {
      double sum = 0.0;
      for (double e : eps) sum += e;
      const double exact = bisect_decreasing([&](double e) { return brute_force_delta(eps, 0.0, e); }, delta, 0.0, sum);
      INFO("trial " << trial << " k " << k << " delta " << delta);
      CHECK(core::heterogeneous_pure_composition_epsilon(eps, delta) >= exact * (1 - 1e-9));
      const double family = core::pure_family_epsilon(eps, delta);
      CHECK(family >= exact * (1 - 1e-9));
      CHECK(family <= sum * (1 + 1e-15));
    }
  }
  // Equal ε: the family uses the exact optimum.
  const std::vector<double> same(6, 0.4);
  const double exact = bisect_decreasing([&](double e) { return brute_force_delta(same, 0.0, e); }, 1e-3, 0.0, 2.4);
  CHECK(core::pure_family_epsilon(same, 1e-3) == Approx(exact).epsilon(1e-9));
  CHECK(core::heterogeneous_pure_composition_epsilon(same, 0.0) == Approx(2.4));
}

TEST_CASE("composition: a mixture's split bound is sound against the exact profile of Gaussian x RR^k",
          "[composition]") {
  for (const double mu : {0.1, 0.5, 1.5}) {
    for (const double e0 : {0.2, 1.0}) {
      for (std::size_t k : {1u, 3u}) {
        const std::vector<double> eps(k, e0);
        core::CompositionInput in;
        in.gaussian_mu = {mu};
        in.gaussian_epsilon_delta = {{10.0, 1e-9}};  // a loose fallback that never binds here
        in.pure_epsilon = eps;
        for (const double delta : {1e-6, 1e-3, 0.05}) {
          const double exact =
              bisect_decreasing([&](double e) { return brute_force_delta(eps, mu, e); }, delta, 0.0, 40.0);
          const core::CompositionTotal t = core::tight_composition(in, delta);
          INFO("mu " << mu << " e0 " << e0 << " k " << k << " delta " << delta << " exact " << exact);
          CHECK(t.epsilon >= exact * (1 - 1e-9));
          CHECK(t.epsilon <= core::gaussian_dp_epsilon(mu, delta) + core::pure_family_epsilon(eps, 0.0) + 1e-12);
          CHECK(t.gaussian_delta + t.pure_delta <= delta * (1 + 1e-12));
          // The split is within 1 % of the best grid of 2000 splits (it optimises, not just bounds).
          double best = INFINITY;
          for (int i = 1; i < 2000; ++i) {
            const double x = delta * i / 2000.0;
            best = std::min(best, core::gaussian_dp_epsilon(mu, x) + core::pure_family_epsilon(eps, delta - x));
          }
          CHECK(t.epsilon <= best * (1 + 1e-4));
        }
      }
    }
  }
}

TEST_CASE("composition: one release equals basic, monotone, never below the largest single epsilon", "[composition]") {
  const double mu = core::analytic_gaussian_mu(0.8, 1e-6);
  {
    core::CompositionInput g;
    g.gaussian_mu = {mu};
    g.gaussian_epsilon_delta = {{0.8, 1e-6}};
    CHECK(core::tight_composition(g, 1e-6).epsilon == Approx(0.8).epsilon(1e-9));
    core::CompositionInput p;
    p.pure_epsilon = {0.3};
    CHECK(core::tight_composition(p, 0.0).epsilon == Approx(0.3).epsilon(1e-12));
    CHECK(core::tight_composition(p, 1e-5).epsilon <= 0.3);
    core::CompositionInput a;
    a.approximate = {{0.6, 1e-7}};
    CHECK(core::tight_composition(a, 1e-7).epsilon == 0.6);
    CHECK(std::isinf(core::tight_composition(a, 1e-8).epsilon));
  }
  // Add releases one at a time (Gaussian, pure, approximate in turn): the total at a fixed δ never
  // falls, never exceeds the basic sum, and is never below any single release's ε at its own δ
  // when that δ is the δ stated.
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> unif(0.1, 1.0);
  core::CompositionInput in;
  const double delta = 1e-5;
  double previous = 0.0, basic_epsilon = 0.0;
  for (int i = 0; i < 24; ++i) {
    const double e = unif(rng);
    switch (i % 3) {
      case 0:
        in.gaussian_mu.push_back(core::analytic_gaussian_mu(e, delta));
        in.gaussian_epsilon_delta.emplace_back(e, delta);
        break;
      case 1:
        in.pure_epsilon.push_back(e);
        break;
      default:
        in.approximate.emplace_back(e, 1e-8);
        break;
    }
    basic_epsilon += e;
    const core::CompositionTotal t = core::tight_composition(in, delta);
    INFO("release " << i);
    if (i % 3 == 0) CHECK(t.epsilon >= e * (1 - 1e-9));  // a Gaussian release at δ, tight at δ
    if (i % 3 == 1) CHECK(t.epsilon >= core::pure_composition_epsilon(e, 1, delta) * (1 - 1e-9));  // optimal alone
    CHECK(t.epsilon >= previous * (1 - 1e-9));
    if (i == 0) CHECK(t.epsilon <= basic_epsilon * (1 + 1e-12));
    previous = t.epsilon;
  }
  // Never above basic when basic's δ fits: a ledger of three releases whose δ's sum to the δ stated.
  core::CompositionInput three;
  three.gaussian_mu = {core::analytic_gaussian_mu(0.1, 4e-6), core::analytic_gaussian_mu(0.1, 4e-6)};
  three.gaussian_epsilon_delta = {{0.1, 4e-6}, {0.1, 4e-6}};
  three.approximate = {{0.1, 2e-6}};
  const core::CompositionTotal t3 = core::tight_composition(three, 1e-5);
  CHECK(t3.epsilon <= 0.3 * (1 + 1e-12));
}

TEST_CASE("composition: zCDP rho adds mu^2/2 and epsilon^2/2", "[composition]") {
  const std::vector<double> mu{0.5, 1.0};
  const std::vector<double> pure{0.2};
  CHECK(core::zcdp_rho(mu, pure) == Approx(0.125 + 0.5 + 0.02));
  // Gaussian σ with sensitivity Δ: ρ = Δ²/(2σ²) (Bun & Steinke 2016).
  const double sigma = core::analytic_gaussian_sigma(1.0, 1e-5, 2.0);
  const std::vector<double> one{2.0 / sigma};
  CHECK(core::zcdp_rho(one, {}) == Approx(4.0 / (2.0 * sigma * sigma)));
}

TEST_CASE("composition: the secure sampler's discrete Gaussian at dpmu's grids is mu-GDP to a relative 1e-5",
          "[composition]") {
  // The tight accountant treats a real Gaussian release (discrete Gaussian N_Z(0, s), integer
  // sensitivity d, s ≥ 2^20 at dpmu's grids) as μ-GDP with μ = d/√s (docs/privacy.md
  // "Accountants", the one step that is not a theorem). Its exact δ(ε), by summation (CKS Theorem
  // 7), against δ_μ(ε): measured excess ≤ 1.1e-6 relative wherever δ ≥ 1e-13.
  double worst = 0.0;
  for (const std::uint64_t s : {std::uint64_t{1} << 20, std::uint64_t{3} << 20, (std::uint64_t{1} << 22) - 7}) {
    for (const double mu_target : {0.05, 0.124, 0.5, 1.0}) {
      const auto d = static_cast<std::uint64_t>(std::llround(mu_target * std::sqrt(static_cast<double>(s))));
      const double mu = static_cast<double>(d) / std::sqrt(static_cast<double>(s));
      for (int i = 0; i <= 12; ++i) {
        const double epsilon = (mu * mu / 2 + 6 * mu) * i / 12.0;
        const double continuous = core::gaussian_dp_delta(mu, epsilon);
        if (continuous < 1e-13) continue;
        const double discrete = core::discrete_gaussian_delta(s, epsilon, d);
        worst = std::max(worst, discrete / continuous - 1.0);
      }
    }
  }
  CHECK(worst < 1e-5);
}
