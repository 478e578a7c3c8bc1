#pragma once
/// @file simulation_gram.hpp
/// Exact sufficient-statistic sampler of the simulation study's data sets (Peña & Barrientos 2024,
/// JMLR 25, §5.2.1; docs/methods.md §5.8 "Exact sufficient-statistic sampling", A6): the centred
/// Gram matrix G of [X y] is drawn from its exact law under y = Xβ + σw, w ~ N(0, I_n), without
/// simulating y row by row:
///   1. X (n × p, iid 32-bit uniforms on (lower, upper)) is streamed into the exact Gram matrix
///      of [1 X] (core::UniformGramAccumulator), giving G_xx = X'MX, M = I − 11'/n;
///   2. given X, v = X'Mw ~ N_p(0, G_xx) exactly, drawn as v = Lζ (G_xx = LL', ζ ~ N_p(0, I));
///   3. w'Mw = v'G_xx⁻¹v + χ²_{n−p−1} = ζ'ζ + χ²_{n−p−1}, the χ² independent of ζ (Cochran), so
///      G_xy = G_xx β + σ v and G_yy = β'G_xx β + 2σ β'v + σ²(ζ'ζ + χ²_{n−p−1}).
/// Per data set: p·n/2 random 64-bit words, then p normals and one χ² draw. Unlike
/// simulate_gram_matrix (simulation_ssp.hpp) no row is redrawn when |y_i| ≥ upper: the law is
/// the untruncated model, at total-variation distance 1 − (1 − q)ⁿ ≤ n·q from the truncated one,
/// q = P(|y| ≥ 2) (docs/methods.md §5.8 gives q for every |T| of the study).

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/uniform_gram.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"

namespace dpmu::experiments {

/// G_xx = X'MX of n rows of p iid uniforms on (lower, upper) at 32-bit resolution drawn from
/// `gen` (per block of 256 rows, column j takes the next 128 words; layout of
/// core::UniformGramAccumulator). Exact sums, so the same bits on every instruction-set path.
/// @throws std::domain_error for n < 2 or n > 2³¹, p ∉ [1, 64], lower ≥ upper.
Eigen::MatrixXd simulate_predictor_gram(int p, std::uint64_t n, double lower, double upper, core::Xoshiro256ppX4& gen,
                                        core::UniformGramPath path = core::UniformGramPath::automatic);

/// Nested read-out of one stream of predictor rows: entry i is G_xx of the first n[i] rows, for
/// increasing n (each row is added once). Per block of 256 rows, column j takes the next 128
/// words of `generators[0]` (one generator for every column in turn: simulate_predictor_gram's
/// stream) or of `generators[j]` (one per column: then the first q columns are those of a
/// q-column call with the first q generators). A block cut at some n[i] is continued from the
/// same words (core::UniformGramAccumulator::add_block_rows), so the rows do not depend on the
/// other n: entry i equals the one-n call for n[i] from the same generator states, bit for bit.
/// @throws std::invalid_argument unless n is non-empty and strictly increasing and there are 1
/// or p generators; as simulate_predictor_gram otherwise.
std::vector<Eigen::MatrixXd> simulate_nested_predictor_grams(
    int p, std::span<const std::uint64_t> n, double lower, double upper, std::span<core::Xoshiro256ppX4> generators,
    core::UniformGramPath path = core::UniformGramPath::automatic);

/// Complete G_xx (p × p, positive definite) to the (p+1) × (p+1) centred Gram matrix of [X y]
/// by steps 2–3 above, drawing p ziggurat normals (core::standard_normal_ziggurat) and one
/// χ²_{n−p−1} (core::chi_square) from `gen`. β_j = design.coefficient for j < |T|, 0 otherwise.
/// @throws std::domain_error if n < p + 2 or G_xx is not positive definite (Cholesky fails).
Eigen::MatrixXd complete_gram_with_response(const Eigen::MatrixXd& predictor_gram, const SimulationDesign& design,
                                            std::uint64_t n, core::Xoshiro256ppX4& gen);

/// One data set of `design` by the exact sufficient-statistic sampler: the predictors from
/// core::Xoshiro256ppX4(key0, key1) (simulate_predictor_gram), then the response statistics from
/// the independent generator core::Xoshiro256ppX4(key0, key1, 1) (complete_gram_with_response).
/// Same signature and result type as simulate_gram_matrix (redrawn_rows is always 0).
/// Deterministic given the key; the same bits whatever `path`.
/// @throws std::domain_error for n < p + 2, n > 2³¹ or an invalid design.
SimulatedGram sample_gram_matrix(const SimulationDesign& design, std::uint64_t n, std::uint64_t key0,
                                 std::uint64_t key1, core::UniformGramPath path = core::UniformGramPath::automatic);

/// One data set drawn from a shared stream of predictor rows (sample_gram_matrices_shared_predictors).
struct SharedPredictorRequest {
  SimulationDesign design;
  std::uint64_t n = 0;                ///< its rows: the first n of the shared stream (its first p columns)
  std::uint64_t response_stream = 1;  ///< its response: core::Xoshiro256ppX4(key0, key1, response_stream), odd
};

/// Work sharing across designs, sample sizes and numbers of predictors (docs/methods.md §5.8,
/// "Shared predictors"): one stream of predictor rows whose column j comes from its own
/// generator core::Xoshiro256ppX4(key0, key1, 2(j + 1)); request i takes the first p_i columns of
/// its first n_i rows (simulate_nested_predictor_grams) and completes them with a response from
/// its own generator core::Xoshiro256ppX4(key0, key1, response_stream_i). Each output has exactly
/// the law of sample_gram_matrix for its design and n, and does not depend on the other
/// requests: output i equals sample_gram_matrices_shared_predictors({request i}, …)[0], bit for
/// bit. The outputs share X (nested in n and p), so across requests they are dependent: this
/// changes the joint law across cells (e.g. the |T|, n and p of a study), never a cell's law. The
/// rows cost max n_i × max p_i, once. (Not bit-equal to sample_gram_matrix, which draws the
/// columns from one generator in turn.)
/// @throws std::invalid_argument if requests is empty, they differ in lower or upper, or a
/// response_stream is even; as sample_gram_matrix otherwise.
std::vector<SimulatedGram> sample_gram_matrices_shared_predictors(
    std::span<const SharedPredictorRequest> requests, std::uint64_t key0, std::uint64_t key1,
    core::UniformGramPath path = core::UniformGramPath::automatic);

}  // namespace dpmu::experiments
