// The exact sufficient-statistic sampler (simulation_gram.hpp; docs/methods.md §5.8): identical
// bits across kernel paths and threads, the exact algebra of the completion, E[G] against its
// closed form, and two-sample tests against the row-by-row generator (simulate_gram_matrix) of
// the entries of G and of the analyses' PMSE and P(true model) at small n.
#include "dpmu/experiments/simulation_gram.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/model_space.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;

namespace {

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// Two-sample Kolmogorov–Smirnov statistic sup |F_a − F_b|.
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0.0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

// Asymptotic two-sample KS critical value at level alpha (Kolmogorov's limit law; for the sample
// sizes here, 3 000 + 3 000, the asymptotic level is slightly conservative).
double ks_critical(double alpha, std::size_t na, std::size_t nb) {
  const double c = std::sqrt(-0.5 * std::log(alpha / 2.0));
  return c * std::sqrt(static_cast<double>(na + nb) / (static_cast<double>(na) * static_cast<double>(nb)));
}

struct Moments {
  double mean = 0.0, var = 0.0;
};
Moments moments(const std::vector<double>& x) {
  Moments m;
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(x.size());
  for (double v : x) m.var += (v - m.mean) * (v - m.mean);
  m.var /= static_cast<double>(x.size() - 1);
  return m;
}

// Welch z statistic of the difference of two means.
double welch_z(const std::vector<double>& a, const std::vector<double>& b) {
  const Moments ma = moments(a), mb = moments(b);
  return (ma.mean - mb.mean) / std::sqrt(ma.var / a.size() + mb.var / b.size());
}

}  // namespace

TEST_CASE("sample_gram_matrix: identical bits across kernel paths and threads, deterministic", "[simulation_gram]") {
  const auto d = ex::simulation_design(9, 4, 7.0);
  const std::uint64_t n = 100000 + 37;
  const auto ref = ex::sample_gram_matrix(d, n, 3, 4, core::UniformGramPath::generic);
  CHECK(ref.redrawn_rows == 0);
  for (auto path : {core::UniformGramPath::automatic, core::UniformGramPath::avx2, core::UniformGramPath::avx512,
                    core::UniformGramPath::avx512ifma}) {
    if (!core::uniform_gram_path_available(path)) {
      WARN("path " << core::to_string(path) << " not available on this CPU: not compared");
      continue;
    }
    CHECK(same_bits(ex::sample_gram_matrix(d, n, 3, 4, path).gram, ref.gram));
  }
  // two threads at once, each data set as in the serial run
  Eigen::MatrixXd a, b;
  std::thread ta([&] { a = ex::sample_gram_matrix(d, n, 3, 4).gram; });
  std::thread tb([&] { b = ex::sample_gram_matrix(d, n, 3, 5).gram; });
  ta.join();
  tb.join();
  CHECK(same_bits(a, ref.gram));
  CHECK(same_bits(b, ex::sample_gram_matrix(d, n, 3, 5).gram));
  CHECK_FALSE(same_bits(a, b));
}

TEST_CASE("sample_gram_matrix: a given beta and per-predictor widths (dpmu plan-bma's design)", "[simulation_gram]") {
  const ex::SimulationDesign d = ex::simulation_design(3, 2, 7.0);
  const auto base = ex::sample_gram_matrix(d, 1000, 11, 12).gram;
  // beta given as the vector it already is: the same bits.
  ex::SimulationDesign given = d;
  given.coefficients = {d.coefficient, d.coefficient, 0.0};
  CHECK(ex::sample_gram_matrix(given, 1000, 11, 12).gram == base);
  CHECK(ex::design_coefficients(given) == ex::design_coefficients(d));
  // widths equal to the design's range: the same matrix up to rounding (unit range, then scaled).
  ex::SimulationDesign wide = d;
  wide.widths = {4.0, 4.0, 4.0};
  const auto scaled = ex::sample_gram_matrix(wide, 1000, 11, 12).gram;
  CHECK((scaled - base).cwiseAbs().maxCoeff() <= 1e-12 * base.cwiseAbs().maxCoeff());
  // widths w_j: the predictor block is the unit-range one scaled by w_a w_b (the same X draws).
  ex::SimulationDesign mixed = d;
  mixed.widths = {1.0, 3.0, 0.5};
  ex::SimulationDesign unit = d;
  unit.widths = {1.0, 1.0, 1.0};
  const auto gm = ex::sample_gram_matrix(mixed, 1000, 11, 12).gram;
  const auto gu = ex::sample_gram_matrix(unit, 1000, 11, 12).gram;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) CHECK(gm(a, b) == Approx(gu(a, b) * mixed.widths[a] * mixed.widths[b]).epsilon(1e-13));
  }
  // wrong lengths and non-finite values are refused; the row-by-row generator takes neither
  ex::SimulationDesign bad = d;
  bad.coefficients = {1.0};
  CHECK_THROWS_AS(ex::sample_gram_matrix(bad, 1000, 1, 2), std::invalid_argument);
  bad = d;
  bad.widths = {1.0, 0.0, 1.0};
  CHECK_THROWS_AS(ex::sample_gram_matrix(bad, 1000, 1, 2), std::domain_error);
  CHECK_THROWS_AS(ex::SimulatedRows(given, 1, 2), std::invalid_argument);
}

TEST_CASE("complete_gram_with_response: the exact algebra of the completion", "[simulation_gram]") {
  // G_xx from the predictors; the completion must keep G_xx, and its Schur complement
  // G_yy − G_xy' G_xx⁻¹ G_xy = σ² χ² must be positive; with σ = 0 the response is exactly Xβ.
  const auto d = ex::simulation_design(6, 3, 7.0);
  const std::uint64_t n = 5000;
  core::Xoshiro256ppX4 gen(8, 9);
  const Eigen::MatrixXd gxx = ex::simulate_predictor_gram(6, n, -2.0, 2.0, gen);
  core::Xoshiro256ppX4 g1(1, 1);
  const Eigen::MatrixXd g = ex::complete_gram_with_response(gxx, d, n, g1);
  CHECK(same_bits(g.topLeftCorner(6, 6), gxx));
  const double schur = g(6, 6) - g.col(6).head(6).dot(gxx.ldlt().solve(g.col(6).head(6)));
  CHECK(schur > 0.0);
  // χ²_{n−p−1} / (n − p − 1) is within 6 sd of 1 (sd sqrt(2/(n−7)) ≈ 0.02)
  CHECK(std::abs(schur / (d.sigma * d.sigma) / (n - 7.0) - 1.0) < 6.0 * std::sqrt(2.0 / (n - 7.0)));
  auto d0 = d;
  d0.sigma = 0.0;
  core::Xoshiro256ppX4 g2(1, 1);
  const Eigen::MatrixXd h = ex::complete_gram_with_response(gxx, d0, n, g2);
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(6);
  beta.head(3).setConstant(d.coefficient);
  CHECK((h.col(6).head(6) - gxx * beta).norm() == Approx(0.0).margin(1e-12 * gxx.norm()));
  CHECK(h(6, 6) == Approx(beta.dot(gxx * beta)).epsilon(1e-13));
  core::Xoshiro256ppX4 g3(1, 1);
  CHECK_THROWS_WITH(ex::complete_gram_with_response(Eigen::MatrixXd::Zero(6, 6), d, n, g3),
                    Catch::Contains("positive definite"));
  CHECK_THROWS_WITH(ex::sample_gram_matrix(d, 7, 1, 2), Catch::Contains("n"));
}

TEST_CASE("sample_gram_matrix: E[G] equals its closed form", "[statistical][simulation_gram]") {
  // x ~ discrete uniform on the 2^32 cell midpoints of (−2, 2): Var(x) = (4/3)(1 − 2^-64).
  // E[G_xx] = (n−1) Var(x) I, E[G_xy] = (n−1) Var(x) β, E[G_yy] = (n−1)(Var(x) β'β + σ²).
  // 4 000 data sets; each of the 10 unique entries within 5 Monte Carlo SE of its expectation
  // (normal limit: false-failure probability 5.7e-7 per entry, < 6e-6 in all).
  const int p = 3;
  const auto d = ex::simulation_design(p, 2, 7.0);
  const std::uint64_t n = 30;
  const int reps = 4000;
  const double var_x = 4.0 / 3.0;
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
  beta.head(2).setConstant(d.coefficient);
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(p + 1, p + 1);
  expected.topLeftCorner(p, p) = (n - 1.0) * var_x * Eigen::MatrixXd::Identity(p, p);
  expected.col(p).head(p) = (n - 1.0) * var_x * beta;
  expected.row(p).head(p) = expected.col(p).head(p).transpose();
  expected(p, p) = (n - 1.0) * (var_x * beta.squaredNorm() + d.sigma * d.sigma);
  std::vector<std::vector<double>> entries((p + 1) * (p + 1));
  for (int r = 0; r < reps; ++r) {
    const auto g = ex::sample_gram_matrix(d, n, 77, static_cast<std::uint64_t>(r)).gram;
    for (int a = 0; a <= p; ++a) {
      for (int b = 0; b <= a; ++b) entries[static_cast<std::size_t>(a * (p + 1) + b)].push_back(g(a, b));
    }
  }
  for (int a = 0; a <= p; ++a) {
    for (int b = 0; b <= a; ++b) {
      const Moments m = moments(entries[static_cast<std::size_t>(a * (p + 1) + b)]);
      INFO("entry (" << a << ", " << b << "): mean " << m.mean << ", expected " << expected(a, b));
      CHECK(std::abs(m.mean - expected(a, b)) < 5.0 * std::sqrt(m.var / reps));
    }
  }
}

TEST_CASE("sample_gram_matrix agrees with the row-by-row generator: entries of G (two-sample KS)",
          "[statistical][simulation_gram]") {
  // 3 000 data sets from each generator per cell, every unique entry of G; KS at level 1e-6 per
  // entry (6 + 28 entries: false-failure probability < 3.4e-5). The row generator truncates
  // |y| < 2; at these n the total-variation distance is ≤ n·q < 1e-10 (docs/methods.md §5.8).
  struct CellSpec {
    int p, t;
    std::uint64_t n;
  };
  for (const CellSpec c : {CellSpec{2, 1, 20}, CellSpec{6, 3, 40}}) {
    const auto d = ex::simulation_design(c.p, c.t, 7.0);
    const int reps = 3000;
    const int dim = c.p + 1;
    std::vector<std::vector<double>> fast(dim * dim), rows(dim * dim);
    for (int r = 0; r < reps; ++r) {
      const auto gf = ex::sample_gram_matrix(d, c.n, 501, static_cast<std::uint64_t>(r)).gram;
      const auto gr = ex::simulate_gram_matrix(d, c.n, 502, static_cast<std::uint64_t>(r)).gram;
      for (int a = 0; a < dim; ++a) {
        for (int b = 0; b <= a; ++b) {
          fast[static_cast<std::size_t>(a * dim + b)].push_back(gf(a, b));
          rows[static_cast<std::size_t>(a * dim + b)].push_back(gr(a, b));
        }
      }
    }
    const double crit = ks_critical(1e-6, reps, reps);
    for (int a = 0; a < dim; ++a) {
      for (int b = 0; b <= a; ++b) {
        const double ks =
            ks_statistic(fast[static_cast<std::size_t>(a * dim + b)], rows[static_cast<std::size_t>(a * dim + b)]);
        INFO("p = " << c.p << ", |T| = " << c.t << ", n = " << c.n << ", entry (" << a << ", " << b << "): KS " << ks
                    << " vs " << crit);
        CHECK(ks < crit);
      }
    }
  }
}

TEST_CASE("sample_gram_matrix agrees with the row-by-row generator: PMSE and P(true model)",
          "[statistical][simulation_gram]") {
  // Non-private ZS model averaging (beta-binomial(1,1)) of 3 000 data sets per generator in two
  // small cells; per cell and metric a two-sample KS at level 1e-6 and a Welch z-test of the means
  // at |z| < 4.9 (two-sided 9.6e-7): 8 tests, false-failure probability < 1e-5.
  struct CellSpec {
    int p, t;
    std::uint64_t n;
  };
  const auto model_prior = core::parse_model_prior("beta-binomial:1,1");
  for (const CellSpec c : {CellSpec{2, 1, 40}, CellSpec{3, 2, 25}}) {
    const auto d = ex::simulation_design(c.p, c.t, 7.0);
    const auto zs = core::parse_coefficient_prior("zellner-siow", static_cast<double>(c.n));
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(c.p);
    beta.head(c.t).setConstant(d.coefficient);
    const auto truth = static_cast<Eigen::Index>((core::ModelMask{1} << c.t) - 1);
    const int reps = 3000;
    std::vector<double> pmse_f, pmse_r, ptrue_f, ptrue_r;
    core::BmaOptions opts;
    opts.top_models = 0;
    opts.keep_all_models = true;
    opts.credible_level = 0.0;  // PIPs and coefficients only
    const double nn = static_cast<double>(c.n);
    for (int r = 0; r < reps; ++r) {
      const auto gf = ex::sample_gram_matrix(d, c.n, 601, static_cast<std::uint64_t>(r)).gram;
      const auto gr = ex::simulate_gram_matrix(d, c.n, 602, static_cast<std::uint64_t>(r)).gram;
      const auto rf = core::bayesian_model_averaging(gf, nn, zs, model_prior, opts);
      const auto rr = core::bayesian_model_averaging(gr, nn, zs, model_prior, opts);
      pmse_f.push_back(ex::predictive_mse(gf, nn, beta, rf.model_averaged_coefficients));
      pmse_r.push_back(ex::predictive_mse(gr, nn, beta, rr.model_averaged_coefficients));
      ptrue_f.push_back(std::exp(rf.log_posterior_probability(truth)));
      ptrue_r.push_back(std::exp(rr.log_posterior_probability(truth)));
    }
    const double crit = ks_critical(1e-6, reps, reps);
    INFO("p = " << c.p << ", |T| = " << c.t << ", n = " << c.n << "; mean PMSE " << moments(pmse_f).mean << " vs "
                << moments(pmse_r).mean << ", mean P(true) " << moments(ptrue_f).mean << " vs "
                << moments(ptrue_r).mean);
    CHECK(ks_statistic(pmse_f, pmse_r) < crit);
    CHECK(ks_statistic(ptrue_f, ptrue_r) < crit);
    CHECK(std::abs(welch_z(pmse_f, pmse_r)) < 4.9);
    CHECK(std::abs(welch_z(ptrue_f, ptrue_r)) < 4.9);
    // the cell is informative: P(true) is neither ~0 nor ~1 on average
    CHECK(moments(ptrue_f).mean > 0.05);
    CHECK(moments(ptrue_f).mean < 0.99);
  }
}

namespace {
// requests for the designs at one n, response streams 2i + 1
std::vector<ex::SharedPredictorRequest> requests_at(const std::vector<ex::SimulationDesign>& designs, std::uint64_t n) {
  std::vector<ex::SharedPredictorRequest> out;
  for (std::size_t i = 0; i < designs.size(); ++i) out.push_back({designs[i], n, 2 * i + 1});
  return out;
}
}  // namespace

TEST_CASE("sample_gram_matrices_shared_predictors: one X, independent responses, the unshared law per design",
          "[simulation_gram]") {
  const std::vector<ex::SimulationDesign> designs = {ex::simulation_design(6, 0, 7.0), ex::simulation_design(6, 3, 7.0),
                                                     ex::simulation_design(6, 6, 7.0)};
  const std::uint64_t n = 3000;
  const auto shared = ex::sample_gram_matrices_shared_predictors(requests_at(designs, n), 21, 22);
  REQUIRE(shared.size() == 3);
  // each output is the data set its request gets alone; all share G_xx bit for bit
  const auto reqs = requests_at(designs, n);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(
        same_bits(shared[i].gram, ex::sample_gram_matrices_shared_predictors(std::span(&reqs[i], 1), 21, 22)[0].gram));
  }
  for (const auto& s : shared) CHECK(same_bits(s.gram.topLeftCorner(6, 6), shared[0].gram.topLeftCorner(6, 6)));
  // the responses differ (independent streams): G_yy of |T| = 0 is σ²(ζ'ζ + χ²), not that of |T| = 6
  CHECK(shared[1].gram(6, 6) != shared[2].gram(6, 6));
  auto bad = requests_at(designs, n);
  bad[1].design.upper = 3.0;
  CHECK_THROWS_WITH(ex::sample_gram_matrices_shared_predictors(bad, 1, 2), Catch::Contains("share lower and upper"));
  CHECK_THROWS_WITH(ex::sample_gram_matrices_shared_predictors({}, 1, 2), Catch::Contains("empty"));
  auto zero = requests_at(designs, n);
  zero[2].response_stream = 4;
  CHECK_THROWS_WITH(ex::sample_gram_matrices_shared_predictors(zero, 1, 2), Catch::Contains("response_stream"));
}

TEST_CASE("simulate_nested_predictor_grams: the first n rows of one stream, whatever the other n",
          "[simulation_gram]") {
  // n that cut blocks of 256 rows anywhere (in the first and the second half of a block's words),
  // on block boundaries, and one row apart
  const std::vector<std::uint64_t> ns = {5, 100, 129, 256, 300, 301, 1000, 5000};
  for (const auto path : {dpmu::core::UniformGramPath::generic, dpmu::core::UniformGramPath::automatic}) {
    std::vector<dpmu::core::Xoshiro256ppX4> gen{{41, 42}};
    const auto nested = ex::simulate_nested_predictor_grams(4, ns, -2.0, 2.0, gen, path);
    REQUIRE(nested.size() == ns.size());
    for (std::size_t i = 0; i < ns.size(); ++i) {
      dpmu::core::Xoshiro256ppX4 alone(41, 42);
      INFO("n = " << ns[i]);
      CHECK(same_bits(nested[i], ex::simulate_predictor_gram(4, ns[i], -2.0, 2.0, alone, path)));
    }
    // one generator per column: the first 2 columns of a 4-column stream are the 2-column stream
    std::vector<dpmu::core::Xoshiro256ppX4> four{{5, 6, 2}, {5, 6, 4}, {5, 6, 6}, {5, 6, 8}};
    std::vector<dpmu::core::Xoshiro256ppX4> two{{5, 6, 2}, {5, 6, 4}};
    const auto wide = ex::simulate_nested_predictor_grams(4, ns, -2.0, 2.0, four, path);
    const auto narrow = ex::simulate_nested_predictor_grams(2, ns, -2.0, 2.0, two, path);
    for (std::size_t i = 0; i < ns.size(); ++i) CHECK(same_bits(wide[i].topLeftCorner(2, 2), narrow[i]));
  }
  std::vector<dpmu::core::Xoshiro256ppX4> gen{{1, 2}};
  const std::vector<std::uint64_t> unsorted = {100, 50};
  CHECK_THROWS_WITH(ex::simulate_nested_predictor_grams(4, unsorted, -2.0, 2.0, gen), Catch::Contains("increasing"));
  CHECK_THROWS_WITH(ex::simulate_nested_predictor_grams(4, {}, -2.0, 2.0, gen), Catch::Contains("no sample size"));
  std::vector<dpmu::core::Xoshiro256ppX4> three{{1, 2, 2}, {1, 2, 4}, {1, 2, 6}};
  CHECK_THROWS_WITH(ex::simulate_nested_predictor_grams(4, ns, -2.0, 2.0, three), Catch::Contains("one per column"));
}

TEST_CASE("sample_gram_matrices_shared_predictors: nested n, a request's data set does not depend on the others",
          "[simulation_gram]") {
  const auto d0 = ex::simulation_design(6, 0, 7.0);
  const auto d3 = ex::simulation_design(6, 3, 7.0);
  const auto small = ex::simulation_design(2, 1, 7.0);
  const std::vector<ex::SharedPredictorRequest> all = {{d3, 5000, 11},  {d0, 700, 13},   {d3, 700, 15},
                                                       {d0, 20000, 17}, {d3, 20000, 19}, {small, 700, 21}};
  const auto together = ex::sample_gram_matrices_shared_predictors(all, 8, 9);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto alone = ex::sample_gram_matrices_shared_predictors(std::span(&all[i], 1), 8, 9);
    INFO("request " << i);
    CHECK(same_bits(together[i].gram, alone[0].gram));
  }
  // the same n shares G_xx; another n has its own (the rows of n = 700 are the first of n = 20000:
  // simulate_nested_predictor_grams' test)
  CHECK(same_bits(together[1].gram.topLeftCorner(6, 6), together[2].gram.topLeftCorner(6, 6)));
  CHECK(!same_bits(together[1].gram.topLeftCorner(6, 6), together[3].gram.topLeftCorner(6, 6)));
  // nested in p: the p = 2 data set's predictors are the first 2 of the p = 6 ones at the same n
  CHECK(same_bits(together[5].gram.topLeftCorner(2, 2), together[1].gram.topLeftCorner(2, 2)));
}

TEST_CASE("sample_gram_matrices_shared_predictors: each design's law is the unshared one (two-sample KS)",
          "[statistical][simulation_gram]") {
  // 2 000 data sets per method, design |T| = 3 of p = 6 (the second output of the shared call)
  // against sample_gram_matrix; KS on G_yy, G_0y and G_00 at level 1e-6 each (false-failure < 3e-6).
  const std::vector<ex::SimulationDesign> designs = {ex::simulation_design(6, 0, 7.0),
                                                     ex::simulation_design(6, 3, 7.0)};
  const std::uint64_t n = 60;
  const int reps = 2000;
  std::vector<double> sy, uy, s0y, u0y, s00, u00;
  for (int r = 0; r < reps; ++r) {
    const auto g =
        ex::sample_gram_matrices_shared_predictors(requests_at(designs, n), 31, static_cast<std::uint64_t>(r))[1].gram;
    const auto h = ex::sample_gram_matrix(designs[1], n, 32, static_cast<std::uint64_t>(r)).gram;
    sy.push_back(g(6, 6));
    uy.push_back(h(6, 6));
    s0y.push_back(g(0, 6));
    u0y.push_back(h(0, 6));
    s00.push_back(g(0, 0));
    u00.push_back(h(0, 0));
  }
  const double crit = ks_critical(1e-6, reps, reps);
  CHECK(ks_statistic(sy, uy) < crit);
  CHECK(ks_statistic(s0y, u0y) < crit);
  CHECK(ks_statistic(s00, u00) < crit);
}
