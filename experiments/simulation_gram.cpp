/// @file simulation_gram.cpp
/// The exact sufficient-statistic sampler of the simulation study (simulation_gram.hpp;
/// docs/methods.md §5.8 "Exact sufficient-statistic sampling").

#include "dpmu/experiments/simulation_gram.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"

namespace dpmu::experiments {

std::vector<Eigen::MatrixXd> simulate_nested_predictor_grams(int p, std::span<const std::uint64_t> n, double lower,
                                                             double upper, std::span<core::Xoshiro256ppX4> generators,
                                                             core::UniformGramPath path) {
  constexpr const char* fn = "simulate_predictor_gram";
  if (p < 1 || p > 64) core::throw_domain(fn, "p", p, "in [1, 64]");
  if (n.empty()) core::throw_invalid(fn, "no sample size given");
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] < 2 || n[i] > (std::uint64_t{1} << 31))
      core::throw_domain(fn, "n", static_cast<double>(n[i]), "in [2, 2^31]");
    if (i > 0 && n[i] <= n[i - 1]) core::throw_invalid(fn, "the sample sizes must be strictly increasing");
  }
  core::check_ordered_limits(fn, "lower", lower, "upper", upper);
  if (generators.size() != 1 && generators.size() != static_cast<std::size_t>(p)) {
    core::throw_invalid(fn, "give one generator (for every column in turn) or one per column");
  }
  constexpr int W = core::UniformGramAccumulator::block_words;
  constexpr int R = core::UniformGramAccumulator::block_rows;
  core::UniformGramAccumulator acc(p, path);
  core::UniformWordBlock words(static_cast<std::size_t>(p) * W);
  std::vector<Eigen::MatrixXd> out;
  out.reserve(n.size());
  std::uint64_t done = 0;
  int used = R;  // rows of the current block already added (R: draw a new block)
  for (const std::uint64_t target : n) {
    while (done < target) {
      if (used == R) {
        for (int j = 0; j < p; ++j) {
          generators[generators.size() == 1 ? 0 : static_cast<std::size_t>(j)].fill_words(
              std::span<std::uint64_t>(words.data() + j * W, W));
        }
        used = 0;
      }
      const int take = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(R - used), target - done));
      if (used == 0 && take == R) {
        acc.add_block(words.data(), R);  // the SIMD kernel
      } else {
        acc.add_block_rows(words.data(), used, used + take);  // exact scalar code, the same sums
      }
      used += take;
      done += static_cast<std::uint64_t>(take);
    }
    out.push_back(acc.centred_gram(lower, upper));
  }
  return out;
}

Eigen::MatrixXd simulate_predictor_gram(int p, std::uint64_t n, double lower, double upper, core::Xoshiro256ppX4& gen,
                                        core::UniformGramPath path) {
  return std::move(simulate_nested_predictor_grams(p, std::span<const std::uint64_t>(&n, 1), lower, upper,
                                                   std::span<core::Xoshiro256ppX4>(&gen, 1), path)
                       .front());
}

Eigen::MatrixXd complete_gram_with_response(const Eigen::MatrixXd& predictor_gram, const SimulationDesign& design,
                                            std::uint64_t n, core::Xoshiro256ppX4& gen) {
  constexpr const char* fn = "complete_gram_with_response";
  const int p = design.p;
  if (predictor_gram.rows() != p || predictor_gram.cols() != p) {
    core::throw_invalid(fn, "predictor_gram must be p x p");
  }
  if (n < static_cast<std::uint64_t>(p) + 2) core::throw_domain(fn, "n", static_cast<double>(n), ">= p + 2");
  const Eigen::LLT<Eigen::MatrixXd> llt(predictor_gram);
  if (llt.info() != Eigen::Success) {
    core::throw_domain(fn, "predictor_gram", std::nan(""), "positive definite (Cholesky failed)");
  }
  Eigen::VectorXd zeta(p);
  for (int j = 0; j < p; ++j) zeta(j) = core::standard_normal_ziggurat(gen);
  const double chi2 = core::chi_square(gen, static_cast<double>(n) - p - 1.0);
  const Eigen::VectorXd beta = design_coefficients(design);
  const Eigen::VectorXd v = llt.matrixL() * zeta;  // X'Mw | X ~ N(0, G_xx)
  const Eigen::VectorXd gxx_beta = predictor_gram * beta;
  const double sigma = design.sigma;
  Eigen::MatrixXd g(p + 1, p + 1);
  g.topLeftCorner(p, p) = predictor_gram;
  const Eigen::VectorXd gxy = gxx_beta + sigma * v;
  g.col(p).head(p) = gxy;
  g.row(p).head(p) = gxy.transpose();
  g(p, p) = beta.dot(gxx_beta) + 2.0 * sigma * beta.dot(v) + sigma * sigma * (zeta.squaredNorm() + chi2);
  return g;
}

namespace {
/// The checks both samplers make of a data set's design and size.
void check_sampled_design(const char* fn, const SimulationDesign& d, std::uint64_t n) {
  (void)simulation_design(d.p, d.true_model_size, 1.0);  // range checks of p, |T|
  core::check_finite(fn, "coefficient", d.coefficient);
  core::check_finite(fn, "sigma", d.sigma);
  if (!d.coefficients.empty()) {
    if (d.coefficients.size() != static_cast<std::size_t>(d.p))
      core::throw_invalid(fn, "coefficients must have length p");
    for (const double b : d.coefficients) core::check_finite(fn, "coefficients", b);
  }
  if (!d.widths.empty()) {
    if (d.widths.size() != static_cast<std::size_t>(d.p)) core::throw_invalid(fn, "widths must have length p");
    for (const double w : d.widths) core::check_positive_finite(fn, "widths", w);
  }
  if (n < static_cast<std::uint64_t>(d.p) + 2) core::throw_domain(fn, "n", static_cast<double>(n), ">= p + 2");
}
}  // namespace

std::vector<SimulatedGram> sample_gram_matrices_shared_predictors(std::span<const SharedPredictorRequest> requests,
                                                                  std::uint64_t key0, std::uint64_t key1,
                                                                  core::UniformGramPath path) {
  constexpr const char* fn = "sample_gram_matrices_shared_predictors";
  if (requests.empty()) core::throw_invalid(fn, "requests is empty");
  const SimulationDesign& first = requests.front().design;
  std::vector<std::uint64_t> sizes;
  int columns = 0;
  for (const SharedPredictorRequest& r : requests) {
    const SimulationDesign& d = r.design;
    check_sampled_design(fn, d, r.n);
    if (!d.widths.empty()) core::throw_invalid(fn, "per-predictor widths are not supported with shared predictors");
    if (d.lower != first.lower || d.upper != first.upper) {
      core::throw_invalid(fn, "designs must share lower and upper (they share the predictors)");
    }
    if (r.response_stream % 2 == 0) core::throw_invalid(fn, "response_stream must be odd (even streams are X's)");
    sizes.push_back(r.n);
    columns = std::max(columns, d.p);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<core::Xoshiro256ppX4> column_generators;  // column j: stream 2(j + 1), whatever the width
  column_generators.reserve(static_cast<std::size_t>(columns));
  for (int j = 0; j < columns; ++j) column_generators.emplace_back(key0, key1, 2 * static_cast<std::uint64_t>(j + 1));
  const std::vector<Eigen::MatrixXd> gxx =
      simulate_nested_predictor_grams(columns, sizes, first.lower, first.upper, column_generators, path);
  std::vector<SimulatedGram> out(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const SharedPredictorRequest& r = requests[i];
    const auto at = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), r.n) - sizes.begin());
    core::Xoshiro256ppX4 response(key0, key1, r.response_stream);
    out[i].gram = complete_gram_with_response(gxx[at].topLeftCorner(r.design.p, r.design.p), r.design, r.n, response);
  }
  return out;
}

SimulatedGram sample_gram_matrix(const SimulationDesign& design, std::uint64_t n, std::uint64_t key0,
                                 std::uint64_t key1, core::UniformGramPath path) {
  check_sampled_design("sample_gram_matrix", design, n);
  core::Xoshiro256ppX4 predictors(key0, key1);
  Eigen::MatrixXd gxx;
  if (design.widths.empty()) {
    gxx = simulate_predictor_gram(design.p, n, design.lower, design.upper, predictors, path);
  } else {
    // Predictor j on a range of width w_j: the centred Gram matrix of unit-width columns scaled by
    // w_a w_b (exact: the unit-width matrix is the accumulator's exact sums times 2^-64).
    gxx = simulate_predictor_gram(design.p, n, 0.0, 1.0, predictors, path);
    const Eigen::Map<const Eigen::VectorXd> w(design.widths.data(), design.p);
    gxx = w.asDiagonal() * gxx * w.asDiagonal();
  }
  core::Xoshiro256ppX4 response(key0, key1, 1);
  SimulatedGram out;
  out.gram = complete_gram_with_response(gxx, design, n, response);
  return out;
}

}  // namespace dpmu::experiments
