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

Eigen::MatrixXd simulate_predictor_gram(int p, std::uint64_t n, double lower, double upper, core::Xoshiro256ppX4& gen,
                                        core::UniformGramPath path) {
  constexpr const char* fn = "simulate_predictor_gram";
  if (p < 1 || p > 64) core::throw_domain(fn, "p", p, "in [1, 64]");
  if (n < 2 || n > (std::uint64_t{1} << 31)) core::throw_domain(fn, "n", static_cast<double>(n), "in [2, 2^31]");
  core::check_ordered_limits(fn, "lower", lower, "upper", upper);
  constexpr int W = core::UniformGramAccumulator::block_words;
  constexpr int R = core::UniformGramAccumulator::block_rows;
  core::UniformGramAccumulator acc(p, path);
  std::vector<std::uint64_t> words(static_cast<std::size_t>(p) * W);
  for (std::uint64_t done = 0; done < n;) {
    const int m = static_cast<int>(std::min<std::uint64_t>(R, n - done));
    for (int j = 0; j < p; ++j) gen.fill_words(std::span<std::uint64_t>(words.data() + j * W, W));
    acc.add_block(words.data(), m);
    done += static_cast<std::uint64_t>(m);
  }
  return acc.centred_gram(lower, upper);
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
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
  beta.head(design.true_model_size).setConstant(design.coefficient);
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

std::vector<SimulatedGram> sample_gram_matrices_shared_predictors(std::span<const SimulationDesign> designs,
                                                                  std::uint64_t n, std::uint64_t key0,
                                                                  std::uint64_t key1, core::UniformGramPath path) {
  constexpr const char* fn = "sample_gram_matrices_shared_predictors";
  if (designs.empty()) core::throw_invalid(fn, "designs is empty");
  const SimulationDesign& first = designs.front();
  for (const SimulationDesign& d : designs) {
    (void)simulation_design(d.p, d.true_model_size, 1.0);  // range checks of p, |T|
    core::check_finite(fn, "coefficient", d.coefficient);
    core::check_finite(fn, "sigma", d.sigma);
    if (d.p != first.p || d.lower != first.lower || d.upper != first.upper) {
      core::throw_invalid(fn, "designs must share p, lower and upper (they share the predictors)");
    }
  }
  if (n < static_cast<std::uint64_t>(first.p) + 2) core::throw_domain(fn, "n", static_cast<double>(n), ">= p + 2");
  core::Xoshiro256ppX4 predictors(key0, key1);
  const Eigen::MatrixXd gxx = simulate_predictor_gram(first.p, n, first.lower, first.upper, predictors, path);
  std::vector<SimulatedGram> out(designs.size());
  for (std::size_t i = 0; i < designs.size(); ++i) {
    core::Xoshiro256ppX4 response(key0, key1, 1 + i);
    out[i].gram = complete_gram_with_response(gxx, designs[i], n, response);
  }
  return out;
}

SimulatedGram sample_gram_matrix(const SimulationDesign& design, std::uint64_t n, std::uint64_t key0,
                                 std::uint64_t key1, core::UniformGramPath path) {
  return std::move(
      sample_gram_matrices_shared_predictors(std::span<const SimulationDesign>(&design, 1), n, key0, key1, path)
          .front());
}

}  // namespace dpmu::experiments
