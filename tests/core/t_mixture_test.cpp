// The fast quantiles of point-mass + Student t mixtures (TMixture, docs/bma.md "Credible
// intervals") against the algorithm they replaced, kept here as the reference: every
// component's CDF by Boost's students_t (in double precision to keep the test fast; one case with
// the long-double internals of Boost's default policy, as the replaced code), the root bracketed
// from the components' range and solved by TOMS 748 to 2^-40 relative. The model-averaged mixtures are
// rebuilt here from model_coefficient_posterior as summarise_models built them before. The
// stated accuracy: the quantile's probability level under the full mixture is within
// dropped_mass() ≤ τ (plus ~1e-13 of rounding and root tolerance) of the requested one, hence
// the quantiles agree to 1e-6 relative wherever the density at the quantile is not tiny
// (|Δx| ≲ τ / f(x)); next to the jump at 0 only the probability bound is meaningful.
#include "dpmu/core/t_mixture.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/roots.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/data_table.hpp"

using namespace dpmu::core;

namespace {

/// The replaced implementation (bma.cpp before the fast path), unchanged but for the names.
struct ReferenceMixture {
  double point_mass = 0.0;
  std::vector<TComponent> components;

  double total() const {
    double t = point_mass;
    for (const auto& c : components) t += c.weight;
    return t;
  }
  /// The replaced code used Boost's default policy (long-double internals); `long_double` = false
  /// computes the same CDFs in double precision (also ~1e-16 relative, 5× faster), to keep the
  /// test fast; one test case compares with the default policy.
  bool long_double = false;

  template <class Policy>
  double continuous_cdf(double x) const {
    double f = 0.0;
    for (const auto& c : components) {
      const boost::math::students_t_distribution<double, Policy> t(c.degrees_of_freedom);
      const double z = (x - c.location) / c.scale;
      f += c.weight * (z < 0.0 ? boost::math::cdf(t, z) : 1.0 - boost::math::cdf(t, -z));
    }
    return f;
  }
  double continuous_cdf(double x) const {
    using namespace boost::math::policies;
    return long_double ? continuous_cdf<policy<>>(x) : continuous_cdf<policy<promote_double<false>>>(x);
  }
  /// Normalised F(x) and F(x⁻).
  double cdf(double x) const { return (continuous_cdf(x) + (x >= 0.0 ? point_mass : 0.0)) / total(); }
  double cdf_left(double x) const { return (continuous_cdf(x) + (x > 0.0 ? point_mass : 0.0)) / total(); }
};

double reference_quantile(const ReferenceMixture& mix, double q) {
  const double target = q * mix.total();
  if (mix.components.empty()) return 0.0;
  double lo = INFINITY;
  double hi = -INFINITY;
  for (const auto& c : mix.components) {
    lo = std::min(lo, c.location - 8.0 * c.scale);
    hi = std::max(hi, c.location + 8.0 * c.scale);
  }
  const auto cdf = [&](double x) { return mix.continuous_cdf(x) + (x >= 0.0 ? mix.point_mass : 0.0); };
  if (mix.point_mass > 0.0) {
    const double below = mix.continuous_cdf(0.0);
    if (target >= below && target <= below + mix.point_mass) return 0.0;
    if (target < below) {
      hi = 0.0;
      lo = std::min(lo, -1.0);
    } else {
      lo = 0.0;
      hi = std::max(hi, 1.0);
    }
  }
  const auto f = [&](double x) { return cdf(x) - target; };
  for (int i = 0; i < 200 && f(lo) > 0.0; ++i) lo -= std::max(hi - lo, 1e-300);
  for (int i = 0; i < 200 && f(hi) < 0.0; ++i) hi += std::max(hi - lo, 1e-300);
  std::uintmax_t iterations = 200;
  const auto [a, b] =
      boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(40), iterations);
  return 0.5 * (a + b);
}

/// The mixtures of summarise_models (slopes, then the intercept last), as it built them.
std::vector<ReferenceMixture> reference_mixtures(const Eigen::MatrixXd& gram, double n, const CoefficientPrior& prior,
                                                 const std::vector<WeightedModel>& models) {
  const int p = static_cast<int>(gram.rows() - 1);
  std::vector<ReferenceMixture> mix(static_cast<std::size_t>(p + 1));
  constexpr double kNodeFloor = 1e-11;
  const double syy = gram(p, p);
  for (const WeightedModel& wm : models) {
    const ModelCoefficientPosterior post = model_coefficient_posterior(gram, n, wm.model, prior, 1);
    const bool bayesian = is_bayesian(prior.prior.kind);
    const double nu = post.degrees_of_freedom;
    const double rss = syy * (1.0 - post.r_squared);
    for (std::size_t i = 0; i < post.shrinkage.shrinkage.size(); ++i) {
      const double w = wm.probability * post.shrinkage.probability[i];
      if (w < kNodeFloor) continue;
      const double s = bayesian ? post.shrinkage.shrinkage[i] : 1.0;
      const double spread = bayesian ? syy * std::max(0.0, 1.0 - s * post.r_squared) / nu : rss / nu;
      mix[static_cast<std::size_t>(p)].components.push_back({w, 0.0, std::sqrt(spread / n), nu});
      for (int j = 0; j < p; ++j) {
        if (!((wm.model >> j) & 1U)) continue;
        const double scale = std::sqrt((bayesian ? s : 1.0) * spread * post.inverse_gram_diagonal(j));
        mix[static_cast<std::size_t>(j)].components.push_back({w, s * post.ols(j), scale, nu});
      }
    }
    for (int j = 0; j < p; ++j) {
      if (!((wm.model >> j) & 1U)) mix[static_cast<std::size_t>(j)].point_mass += wm.probability;
    }
  }
  return mix;
}

/// The most probable models up to 1 − 1e-7 (BmaOptions::interval_mass), as the enumeration picks them.
std::vector<WeightedModel> top_models(const BmaResult& r) {
  std::vector<WeightedModel> all;
  for (Eigen::Index m = 0; m < r.log_posterior_probability.size(); ++m) {
    all.push_back({static_cast<ModelMask>(m), std::exp(r.log_posterior_probability(m))});
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.probability > b.probability; });
  std::vector<WeightedModel> out;
  double kept = 0.0;
  for (const auto& m : all) {
    if (kept >= 1.0 - 1e-7 || out.size() >= 4096) break;
    out.push_back(m);
    kept += m.probability;
  }
  return out;
}

/// The new quantile against the reference at level q: the documented probability bound always,
/// 1e-6 relative agreement when `relative`.
void check_quantile(const ReferenceMixture& ref, const TMixture& mix, double q, bool relative,
                    double tau = TMixture::kDefaultTau) {
  CAPTURE(q);
  const double x = mix.quantile(q);
  const double bound = mix.dropped_mass() + 1e-12;
  CHECK(mix.dropped_mass() <= tau);
  CHECK(ref.cdf(x) >= q - bound);
  CHECK(ref.cdf_left(x) <= q + bound);
  const double x_ref = reference_quantile(ref, q);
  CAPTURE(x, x_ref);
  if (x_ref == 0.0) {
    CHECK(x == 0.0);
  } else if (relative) {
    CHECK(std::fabs(x - x_ref) <= 1e-6 * std::fabs(x_ref));
  }
}

CoefficientPrior coefficient_prior(PriorKind kind) {
  CoefficientPrior cp;
  cp.prior.kind = kind;
  return cp;
}

/// Every interval of summarise_models against the reference mixtures; with `near_jump`, also
/// levels just outside the jump at 0 of each slope (a quantile next to the point mass).
void compare_intervals(const Eigen::MatrixXd& g, double n, PriorKind kind, bool near_jump, bool long_double = false) {
  CAPTURE(to_string(kind));
  const CoefficientPrior cp = coefficient_prior(kind);
  BmaOptions opt;
  opt.credible_level = 0.0;
  BmaResult r = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt);
  const std::vector<WeightedModel> models = top_models(r);
  summarise_models(g, n, cp, 1, models, 0.0, 0.95, r);
  const CredibleIntervals& ci = r.credible_intervals;
  REQUIRE(ci.level == 0.95);
  std::vector<ReferenceMixture> ref = reference_mixtures(g, n, cp, models);
  for (auto& rm : ref) rm.long_double = long_double;
  const int p = static_cast<int>(g.rows() - 1);
  double dropped = 0.0;
  for (int j = 0; j <= p; ++j) {
    CAPTURE(j);
    const ReferenceMixture& rm = ref[static_cast<std::size_t>(j)];
    const TMixture mix(rm.point_mass, rm.components);
    dropped = std::max(dropped, mix.dropped_mass());
    // summarise_models uses the same mixture.
    const double q_lo = 0.5 * (1.0 - 0.95);  // as summarise_models computes them
    const double q_hi = 0.5 * (1.0 + 0.95);
    CHECK(mix.quantile(q_lo) == (j < p ? ci.lower(j) : ci.intercept_lower));
    CHECK(mix.quantile(q_hi) == (j < p ? ci.upper(j) : ci.intercept_upper));
    check_quantile(rm, mix, q_lo, true);
    check_quantile(rm, mix, q_hi, true);
    if (near_jump && rm.point_mass > 0.0) {
      const double below = rm.continuous_cdf(0.0) / rm.total();
      const double above = below + rm.point_mass / rm.total();
      for (const double delta : {1e-3, 1e-6}) {
        if (below - delta > 0.0) check_quantile(rm, mix, below - delta, delta >= 1e-3);
        if (above + delta < 1.0) check_quantile(rm, mix, above + delta, delta >= 1e-3);
      }
    }
  }
  // omitted_mass reports the share dropped (the nodes below 1e-11 included).
  CHECK(ci.omitted_mass >= dropped);
  CHECK(ci.omitted_mass <= dropped + 1e-11 * static_cast<double>(models.size()) * 1000.0);
}

Eigen::MatrixXd hsb2_gram(double& n) {
  const std::vector<std::string> cols{"female", "race", "ses",     "schtyp", "prog",
                                      "read",   "math", "science", "socst",  "write"};
  const auto t = dpmu::runtime::read_csv(std::string(DPMU_TEST_DATA_DIR) + "/hsb2.csv", cols);
  const Eigen::MatrixXd d = t.matrix(cols);
  n = static_cast<double>(d.rows());
  return dpmu::test::centred_gram(d);
}

}  // namespace

TEST_CASE("StudentT: the series CDF equals Boost's to 1e-14 absolute, Boost's own beyond it", "[bma][t_mixture]") {
  for (const double nu : {1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 31.0, 199.0, 1000.0, 1001.0, 2.5, 7.3, 1e6}) {
    CAPTURE(nu);
    const StudentT t(nu);
    const boost::math::students_t_distribution<double> ref(nu);
    for (double z = -60.0; z <= 60.0; z += 0.037) {
      CAPTURE(z);
      CHECK(std::fabs(t.cdf(z) - boost::math::cdf(ref, z)) <= 1e-14);
      // The density only steers Newton's steps: 1e-9 relative is plenty (lgamma differences at ν = 1e6).
      CHECK(t.pdf(z) == Approx(boost::math::pdf(ref, z)).epsilon(1e-9).margin(1e-300));
    }
    CHECK(t.cdf(INFINITY) == 1.0);
    CHECK(t.cdf(-INFINITY) == 0.0);
  }
  CHECK_THROWS_AS(StudentT(0.0), std::domain_error);
  CHECK_THROWS_AS(StudentT(INFINITY), std::domain_error);
}

TEST_CASE("TMixture: dropping the lightest components moves the CDF by at most dropped_mass <= tau",
          "[bma][t_mixture]") {
  RngStream rng(5, 0, 0, StreamPurpose::data);
  std::vector<TComponent> comps;
  for (int i = 0; i < 300; ++i) {
    const double nu = i % 3 == 0 ? 12.0 : (i % 3 == 1 ? 4.5 : 2000.0);  // series, and Boost's two paths
    comps.push_back({std::exp(-0.1 * i), standard_normal(rng), 0.2 + std::fabs(standard_normal(rng)), nu});
  }
  ReferenceMixture ref{0.3, comps};
  const TMixture full(0.3, comps, 0.0);
  REQUIRE(full.dropped_mass() == 0.0);
  REQUIRE(full.components() == comps.size());
  for (const double tau : {1e-10, 1e-6, 1e-3}) {
    CAPTURE(tau);
    const TMixture mix(0.3, comps, tau);
    CHECK(mix.dropped_mass() <= tau);
    CHECK(mix.dropped_mass() > 0.0);
    CHECK(mix.components() < comps.size());
    for (double x = -6.0; x <= 6.0; x += 0.01) {
      CHECK(std::fabs(mix.cdf(x) - ref.cdf(x)) <= mix.dropped_mass() + 1e-14);
    }
    for (const double q : {1e-6, 0.01, 0.025, 0.3, 0.5, 0.975, 1 - 1e-6}) {
      check_quantile(ref, mix, q, tau <= 1e-10, tau);
    }
  }
  // The quantile falls in the jump at 0, or next to it.
  const double below = ref.continuous_cdf(0.0) / ref.total();
  const TMixture mix(0.3, comps);
  CHECK(mix.quantile(below + 0.5 * 0.3 / ref.total()) == 0.0);
  check_quantile(ref, mix, below - 1e-9, false);
  check_quantile(ref, mix, below + 0.3 / ref.total() + 1e-9, false);
  // Only a point mass; no mass at all.
  CHECK(TMixture(1.0, {}).quantile(0.2) == 0.0);
  CHECK(TMixture(0.0, {}).quantile(0.2) == 0.0);
  CHECK_THROWS_AS(TMixture(0.0, comps).quantile(1.0), std::domain_error);
  CHECK_THROWS_AS(TMixture(0.0, comps, 1.0), std::domain_error);
}

TEST_CASE("TMixture: few CDF passes per quantile", "[bma][t_mixture]") {
  double n = 0.0;
  const Eigen::MatrixXd g = hsb2_gram(n);
  const CoefficientPrior cp = coefficient_prior(PriorKind::zellner_siow);
  BmaOptions opt;
  opt.credible_level = 0.0;
  const BmaResult r = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt);
  const std::vector<ReferenceMixture> ref = reference_mixtures(g, n, cp, top_models(r));
  for (const auto& rm : ref) {
    const TMixture mix(rm.point_mass, rm.components);
    mix.quantile(0.025);
    mix.quantile(0.975);
    CHECK(mix.evaluations() <= 16);
  }
}

TEST_CASE("summarise_models: credible intervals equal the replaced algorithm's on hsb2 (every prior)",
          "[bma][coefficients][t_mixture]") {
  double n = 0.0;
  const Eigen::MatrixXd g = hsb2_gram(n);
  for (const PriorKind kind : {PriorKind::zellner_siow, PriorKind::hyper_g, PriorKind::hyper_g_n, PriorKind::robust,
                               PriorKind::g_prior, PriorKind::bic}) {
    compare_intervals(g, n, kind, kind == PriorKind::zellner_siow || kind == PriorKind::bic);
  }
}

TEST_CASE("summarise_models: credible intervals equal the replaced algorithm's on a random design",
          "[bma][coefficients][t_mixture]") {
  const int n = 50;
  const int p = 6;
  const Eigen::MatrixXd d = dpmu::test::simulate(n, p, 11, {1.0, 0.5, 0.0, 0.3, 0.0, 0.2});
  const Eigen::MatrixXd g = dpmu::test::centred_gram(d);
  SECTION("Boost's default policy, as the replaced code") {
    compare_intervals(g, n, PriorKind::zellner_siow, false, true);
  }
  SECTION("near the jump at 0") {
    for (const PriorKind kind : {PriorKind::zellner_siow, PriorKind::robust, PriorKind::bic}) {
      compare_intervals(g, n, kind, true);
    }
  }
}

TEST_CASE("mixture_credible_intervals: several levels from mixtures built once equal one level at a time",
          "[bma][coefficients][t_mixture]") {
  // The 50/80/95 % intervals of the calibration metrics (experiments/calibration_metrics.hpp) come
  // from one call; they must be the intervals of one call per level, and of a TMixture built per
  // coefficient and level (as mixture_credible_intervals did before), bit for bit.
  const int n = 200;
  const int p = 6;
  const Eigen::MatrixXd d = dpmu::test::simulate(n, p, 7, {0.4, 0.2, 0.0, 0.15, 0.0, 0.0});
  const Eigen::MatrixXd g = dpmu::test::centred_gram(d);
  for (const PriorKind kind : {PriorKind::zellner_siow, PriorKind::g_prior, PriorKind::bic}) {
    CAPTURE(static_cast<int>(kind));
    const CoefficientPrior cp = coefficient_prior(kind);
    BmaOptions opt;
    opt.credible_level = 0.0;
    const BmaResult r = bayesian_model_averaging(g, n, cp, ModelPrior{}, opt);
    CoefficientMixture mix(p);
    for (const WeightedModel& wm : top_models(r)) {
      add_model_components(model_coefficient_posterior(g, n, wm.model, cp, 1), g(p, p), n, cp, wm.probability, mix);
    }
    const std::vector<double> levels = {0.5, 0.8, 0.95};
    const std::vector<CredibleIntervals> all = mixture_credible_intervals(mix, levels);
    REQUIRE(all.size() == levels.size());
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const CredibleIntervals one = mixture_credible_intervals(mix, levels[l]);
      CHECK(all[l].level == levels[l]);
      CHECK(all[l].omitted_mass == one.omitted_mass);
      CHECK(all[l].intercept_lower == one.intercept_lower);
      CHECK(all[l].intercept_upper == one.intercept_upper);
      for (int j = 0; j < p; ++j) {
        CAPTURE(levels[l], j);
        CHECK(all[l].lower(j) == one.lower(j));
        CHECK(all[l].upper(j) == one.upper(j));
        const TMixture t(mix.slope_point_mass[static_cast<std::size_t>(j)], mix.slopes[static_cast<std::size_t>(j)]);
        CHECK(all[l].lower(j) == t.quantile(0.5 * (1.0 - levels[l])));
        CHECK(all[l].upper(j) == t.quantile(0.5 * (1.0 + levels[l])));
      }
    }
    // Some slope has its interval at 0 (the jump) and some not, so both paths are exercised.
    CHECK((all[0].lower.array() == 0.0).any());
    CHECK((all[2].lower.array() != 0.0).any());
  }
  // mix_bma_draws: its credible_level and extra_levels from the same mixtures, as separate calls.
  NoiseAwareOptions na;
  na.bma.credible_level = 0.8;
  na.extra_levels = {0.5, 0.8, 0.95};
  NoiseAwareResult details;
  const BmaResult both = mix_bma_draws({g}, n, coefficient_prior(PriorKind::zellner_siow), ModelPrior{}, na, &details);
  na.extra_levels.clear();
  const BmaResult alone = mix_bma_draws({g}, n, coefficient_prior(PriorKind::zellner_siow), ModelPrior{}, na);
  REQUIRE(details.extra_intervals.size() == 3);
  for (const CredibleIntervals* ci :
       std::vector<const CredibleIntervals*>{&both.credible_intervals, &details.extra_intervals[1]}) {
    CHECK(ci->level == 0.8);
    CHECK(ci->models == alone.credible_intervals.models);
    CHECK(ci->omitted_mass == alone.credible_intervals.omitted_mass);
    CHECK(ci->lower == alone.credible_intervals.lower);
    CHECK(ci->upper == alone.credible_intervals.upper);
    CHECK(ci->intercept_lower == alone.credible_intervals.intercept_lower);
    CHECK(ci->intercept_upper == alone.credible_intervals.intercept_upper);
  }
  CHECK(mixture_credible_intervals(CoefficientMixture(2), std::vector<double>{}).empty());
  CHECK_THROWS_AS(mixture_credible_intervals(CoefficientMixture(2), std::vector<double>{0.5, 1.0}), std::domain_error);
}

TEST_CASE("TMixture: the CDF pass over interleaved components equals one component at a time, to the bit",
          "[t_mixture]") {
  // continuous() runs the series of several components side by side; each component's arithmetic
  // and the order of the sums must be those of StudentT::centred_cdf summed one at a time.
  for (const double nu : {7.0, 10.0, 999.0}) {
    CAPTURE(nu);
    std::vector<TComponent> comps;
    double total = 0.0;
    for (int i = 0; i < 19; ++i) {  // two blocks of 8 and a tail of 3
      comps.push_back({0.5 + 0.1 * i, -1.0 + 0.13 * i, 0.3 + 0.05 * (i % 4), nu});
      total += comps.back().weight;
    }
    const TMixture mix(0.0, comps, 0.0);
    const StudentT t(nu);
    for (const double x : {-2.0, -0.3, 0.0, 0.4, 1.7}) {
      double mass = 0.0;
      double a = 0.0;
      for (const TComponent& c : comps) {
        const double w = c.weight / total;
        mass += w;
        a += w * t.centred_cdf((x - c.location) * (1.0 / c.scale));
      }
      CHECK(mix.cdf(x) == 0.5 * (mass + a));
    }
  }
}
