// Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018; Modrák et al.
// 2023) of the noise-aware analyses of an SSP release (docs/calibration-sbc.md): truths drawn from
// the proper prior of the data-augmentation model (docs/methods.md §5.12) — Σ_x, n Gaussian rows X,
// γ, g, σ², β, y — the centred Gram matrix released by the Laplace or Wishart mechanism, then one
// analysis:
//   sampler    core::noise_aware_sampler (the data-augmentation chain): rank of each β_j and σ²
//              among L thinned posterior draws, the PIPs, 50/80/95 % interval coverage, diagnostics;
//   rejection  core::noise_aware_bma (flat prior on the admissible G, rejection; fallback to plug-in);
//   plugin     core::bayesian_model_averaging of G* + rI (the paper's analysis).
// One CSV line per prior draw on stdout. Seeded: the prior draw r uses RngStream(seed, key, r, ·),
// so any subset of draws can be rerun (--first). Usage:
//   dpmu_sbc_noise_aware --p 2 --n 1000 --mechanism laplace --epsilon 1 --draws 500 --seed 1 \
//       --method sampler [--first 0] [--ranks 99] [--iterations 1000] [--warmup 1000]
// No I/O beyond stdout/stderr; plain main (not Google Benchmark).

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/core/noise_aware_sampler.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;

namespace {

struct Args {
  int p = 2;
  double n = 1000;
  std::string mechanism = "laplace";
  double epsilon = 1.0;
  double delta = 1e-6;
  int draws = 100;
  int first = 0;
  std::uint64_t seed = 1;
  std::string method = "sampler";
  int ranks = 99;
  int iterations = 1000;
  int warmup = 1000;
  int max_iterations = 8000;
  int chains = 4;
  int verbose = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--p")
      a.p = std::stoi(v);
    else if (k == "--n")
      a.n = std::stod(v);
    else if (k == "--mechanism")
      a.mechanism = v;
    else if (k == "--epsilon")
      a.epsilon = std::stod(v);
    else if (k == "--delta")
      a.delta = std::stod(v);
    else if (k == "--draws")
      a.draws = std::stoi(v);
    else if (k == "--first")
      a.first = std::stoi(v);
    else if (k == "--seed")
      a.seed = std::stoull(v);
    else if (k == "--method")
      a.method = v;
    else if (k == "--ranks")
      a.ranks = std::stoi(v);
    else if (k == "--iterations")
      a.iterations = std::stoi(v);
    else if (k == "--warmup")
      a.warmup = std::stoi(v);
    else if (k == "--max-iterations")
      a.max_iterations = std::stoi(v);
    else if (k == "--chains")
      a.chains = std::stoi(v);
    else if (k == "--verbose")
      a.verbose = std::stoi(v);
    else
      throw std::invalid_argument("unknown option " + k);
  }
  return a;
}

/// A draw of W ~ InvWishart(ν, Ψ): W = Ψ^{1/2} (Wishart(ν, I))^{-1} Ψ^{1/2}' via Bartlett.
Eigen::MatrixXd inverse_wishart(RngStream& rng, double nu, const Eigen::MatrixXd& psi) {
  const auto p = static_cast<int>(psi.rows());
  // Σ⁻¹ ~ Wishart(ν, Ψ⁻¹)
  const Eigen::MatrixXd psi_inv = psi.inverse();
  const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(psi_inv).matrixL();
  const Eigen::MatrixXd w = wishart_sample(rng, p, nu, 1.0);
  const Eigen::MatrixXd prec = l * w * l.transpose();
  return prec.inverse();
}

struct Truth {
  Eigen::MatrixXd gram;
  Eigen::VectorXd beta;
  double sigma2 = 0.0;
  ModelMask model = 0;
  double g = 0.0;
};

/// Truths from the prior and the data's centred Gram matrix from n Gaussian rows.
Truth draw_truth(const Args& a, const AugmentedModelPrior& prior, const ModelPrior& mp, RngStream& rng) {
  const int p = a.p;
  Truth t;
  const Eigen::MatrixXd sigma_x = inverse_wishart(rng, prior.design_df, prior.design_scale);
  const Eigen::MatrixXd lx = Eigen::LLT<Eigen::MatrixXd>(sigma_x).matrixL();
  // Model: beta-binomial(a, b) by a Beta(a, b) inclusion probability, then Bernoulli.
  double w = prior_inclusion_probability(mp);
  if (mp.kind == ModelPriorKind::beta_binomial) w = beta(rng, mp.a, mp.b);
  for (int j = 0; j < p; ++j) {
    if (uniform_open01(rng) < w) t.model |= ModelMask{1} << j;
  }
  t.g = prior.coefficient.kind == PriorKind::zellner_siow ? 0.5 * a.n / standard_gamma(rng, 0.5)
                                                          : (prior.coefficient.g ? *prior.coefficient.g : a.n);
  t.sigma2 = prior.sigma2_scale / standard_gamma(rng, prior.sigma2_shape);
  const auto n = static_cast<Eigen::Index>(a.n);
  Eigen::MatrixXd x(n, p);
  for (Eigen::Index i = 0; i < n; ++i) {
    Eigen::VectorXd z(p);
    for (int j = 0; j < p; ++j) z(j) = standard_normal_ziggurat(rng);
    x.row(i) = (lx * z).transpose();
  }
  const Eigen::RowVectorXd mean = x.colwise().mean();
  x.rowwise() -= mean;
  const Eigen::MatrixXd xx = x.transpose() * x;
  t.beta = Eigen::VectorXd::Zero(p);
  std::vector<Eigen::Index> idx;
  for (int j = 0; j < p; ++j) {
    if ((t.model >> j) & 1U) idx.push_back(j);
  }
  if (!idx.empty()) {
    const auto k = static_cast<Eigen::Index>(idx.size());
    Eigen::MatrixXd sub(k, k);
    for (Eigen::Index r = 0; r < k; ++r)
      for (Eigen::Index c = 0; c < k; ++c) sub(r, c) = xx(idx[r], idx[c]);
    // β_γ ~ N(0, g σ² sub⁻¹): β = sqrt(gσ²) L'⁻¹ z with sub = L L'.
    const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(sub).matrixL();
    Eigen::VectorXd z(k);
    for (Eigen::Index r = 0; r < k; ++r) z(r) = standard_normal(rng);
    const Eigen::VectorXd b = std::sqrt(t.g * t.sigma2) * l.transpose().triangularView<Eigen::Upper>().solve(z);
    for (Eigen::Index r = 0; r < k; ++r) t.beta(idx[r]) = b(r);
  }
  Eigen::VectorXd y = x * t.beta;
  const double sigma = std::sqrt(t.sigma2);
  for (Eigen::Index i = 0; i < n; ++i) y(i) += sigma * standard_normal_ziggurat(rng);
  y.array() -= y.mean();
  t.gram.resize(p + 1, p + 1);
  t.gram.topLeftCorner(p, p) = xx;
  const Eigen::VectorXd xy = x.transpose() * y;
  t.gram.col(p).head(p) = xy;
  t.gram.row(p).head(p) = xy.transpose();
  t.gram(p, p) = y.squaredNorm();
  return t;
}

int rank_of(double truth, const std::vector<double>& draws, RngStream& rng) {
  int below = 0;
  int ties = 0;
  for (double v : draws) {
    if (v < truth)
      ++below;
    else if (v == truth)
      ++ties;
  }
  // Ties (β_j = 0 exactly in models without j) broken uniformly at random (Talts et al. §4.1).
  return below + static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(ties) + 1));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const int p = a.p;
    SspMechanism mech;
    mech.p = p;
    mech.epsilon = a.epsilon;
    // Release mode with unit-width columns (docs/methods.md §5.1): Δ1 = ((n−1)/n)(p+1)(p+2)/2, B² = ((n−1)/n)(p+1).
    if (a.mechanism == "laplace") {
      mech.kind = SspMechanismKind::laplace;
      mech.noise_l1_sensitivity = (a.n - 1.0) / a.n * (p + 1.0) * (p + 2.0) / 2.0;
    } else if (a.mechanism == "wishart") {
      mech.kind = SspMechanismKind::wishart;
      mech.delta = a.delta;
      mech.noise_row_norm_squared = (a.n - 1.0) / a.n * (p + 1.0);
    } else {
      throw std::invalid_argument("--mechanism must be laplace or wishart");
    }
    check_ssp_mechanism(mech);
    Prior zs;
    zs.kind = PriorKind::zellner_siow;
    const Eigen::VectorXd widths = Eigen::VectorXd::Ones(p + 1);
    const AugmentedModelPrior prior = default_augmented_prior(widths, zs);
    ModelPrior mp;  // beta-binomial(1, 1)
    const std::uint64_t key = fnv1a_64("sbc/noise-aware/" + a.mechanism + "/" + std::to_string(p) + "/" +
                                       std::to_string(static_cast<long long>(a.n)) + "/" + std::to_string(a.epsilon));
    std::cout << "method,mechanism,p,n,epsilon,draw,seconds,converged,max_rhat,min_ess,iterations,fallback";
    for (int j = 0; j < p; ++j)
      std::cout << ",gamma" << j << ",beta" << j << ",pip" << j << ",rank_beta" << j << ",cover50_" << j << ",cover80_"
                << j << ",cover95_" << j;
    std::cout << ",sigma2,rank_sigma2,L\n";
    for (int r = a.first; r < a.first + a.draws; ++r) {
      RngStream data_rng(a.seed, key, static_cast<std::uint64_t>(r), StreamPurpose::data);
      RngStream noise_rng(a.seed, key, static_cast<std::uint64_t>(r), StreamPurpose::noise);
      RngStream mcmc_rng(a.seed, key, static_cast<std::uint64_t>(r), StreamPurpose::calibration);
      const Truth t = draw_truth(a, prior, mp, data_rng);
      const Eigen::MatrixXd gstar = t.gram + ssp_noise(mech, noise_rng);
      const auto start = std::chrono::steady_clock::now();
      Eigen::VectorXd pip(p), lo50(p), hi50(p), lo80(p), hi80(p), lo95(p), hi95(p);
      std::vector<int> ranks(static_cast<std::size_t>(p), -1);
      int rank_s2 = -1;
      bool converged = true;
      double max_rhat = NAN, min_ess = NAN;
      int iters = 0;
      bool fallback = false;
      if (a.method == "sampler") {
        NoiseAwareSamplerOptions o;
        o.chains = a.chains;
        o.warmup = a.warmup;
        o.iterations = a.iterations;
        o.max_iterations = a.max_iterations;
        o.keep_draws = true;
        o.credible_level = 0.0;
        const NoiseAwareSamplerResult res = noise_aware_sampler(gstar, mech, a.n, prior, mp, mcmc_rng, o);
        pip = res.posterior.posterior_inclusion_probability;
        if (a.verbose) {
          std::cerr << "draw " << r << " truth model " << t.model << " g " << t.g << " sigma2 " << t.sigma2 << " beta "
                    << t.beta.transpose() << "\nG =\n"
                    << t.gram << "\nG* =\n"
                    << gstar << "\n";
          for (const auto& mq : res.monitored) {
            std::cerr << "  " << mq.name << " mean " << mq.summary.mean << " sd " << mq.summary.sd << " rhat "
                      << mq.summary.rhat << " ess " << mq.summary.ess_bulk << "\n";
          }
          std::cerr << "  evaluations " << res.log_density_evaluations << " " << res.reason << "\n";
        }
        converged = res.converged;
        max_rhat = res.max_rhat;
        min_ess = res.min_ess;
        iters = res.iterations;
        const Eigen::Index total = res.sigma2_draws.size();
        std::vector<Eigen::Index> pick;
        for (int l = 0; l < a.ranks; ++l)
          pick.push_back((static_cast<Eigen::Index>(l) * total) / a.ranks + total / (2 * a.ranks));
        for (int j = 0; j < p; ++j) {
          std::vector<double> dr;
          for (auto i : pick) dr.push_back(res.beta_draws(i, j));
          ranks[static_cast<std::size_t>(j)] = rank_of(t.beta(j), dr, mcmc_rng);
          std::vector<double> all(res.beta_draws.col(j).data(), res.beta_draws.col(j).data() + total);
          std::sort(all.begin(), all.end());
          const auto q = [&](double u) { return all[static_cast<std::size_t>(std::floor(u * (total - 1)))]; };
          lo50(j) = q(0.25);
          hi50(j) = q(0.75);
          lo80(j) = q(0.10);
          hi80(j) = q(0.90);
          lo95(j) = q(0.025);
          hi95(j) = q(0.975);
        }
        std::vector<double> ds;
        for (auto i : pick) ds.push_back(res.sigma2_draws(i));
        rank_s2 = rank_of(t.sigma2, ds, mcmc_rng);
      } else {
        CoefficientPrior cp;
        cp.prior.kind = PriorKind::zellner_siow;
        NoiseAwareOptions no;
        no.bma.credible_level = 0.95;
        no.extra_levels = {0.5, 0.8};
        no.draws = 200;
        NoiseAwareResult res;
        if (a.method == "rejection") {
          const double ridge = mech.kind == SspMechanismKind::laplace ? 0.0 : wishart_regularization(mech);
          RngStream ridge_rng(a.seed, key ^ 0x5bd1e995ULL, 0, StreamPurpose::calibration);
          const double rr =
              mech.kind == SspMechanismKind::laplace ? monte_carlo_regularization(mech, ridge_rng, 20000) : ridge;
          const Eigen::MatrixXd fb = regularize(gstar, rr).matrix;
          const Eigen::VectorXd maxd = gram_diagonal_bounds(a.n, Eigen::VectorXd::Constant(p + 1, 8.0));
          res = noise_aware_bma(gstar, mech, maxd, a.n, cp, mp, fb, mcmc_rng, no);
          fallback = res.fallback;
          if (fallback) {  // the plug-in answer it reports: intervals at the extra levels from its one matrix
            std::vector<Eigen::MatrixXd> one{fb};
            NoiseAwareResult det;
            res.posterior = mix_bma_draws(one, a.n, cp, mp, no, &det);
            res.extra_intervals = det.extra_intervals;
          }
        } else if (a.method == "plugin") {
          RngStream ridge_rng(a.seed, key ^ 0x5bd1e995ULL, 0, StreamPurpose::calibration);
          const double rr = mech.kind == SspMechanismKind::laplace ? monte_carlo_regularization(mech, ridge_rng, 20000)
                                                                   : wishart_regularization(mech);
          std::vector<Eigen::MatrixXd> one{regularize(gstar, rr).matrix};
          res.posterior = mix_bma_draws(one, a.n, cp, mp, no, &res);
        } else {
          throw std::invalid_argument("--method must be sampler, rejection or plugin");
        }
        pip = res.posterior.posterior_inclusion_probability;
        lo95 = res.posterior.credible_intervals.lower;
        hi95 = res.posterior.credible_intervals.upper;
        lo50 = res.extra_intervals.at(0).lower;
        hi50 = res.extra_intervals.at(0).upper;
        lo80 = res.extra_intervals.at(1).lower;
        hi80 = res.extra_intervals.at(1).upper;
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%s,%s,%d,%.0f,%g,%d,%.4f,%d,%.5f,%.1f,%d,%d", a.method.c_str(), a.mechanism.c_str(), p, a.n,
                  a.epsilon, r, secs, converged ? 1 : 0, max_rhat, min_ess, iters, fallback ? 1 : 0);
      for (int j = 0; j < p; ++j) {
        const double b = t.beta(j);
        std::printf(",%d,%.10g,%.8f,%d,%d,%d,%d", static_cast<int>((t.model >> j) & 1U), b, pip(j),
                    ranks[static_cast<std::size_t>(j)], lo50(j) <= b && b <= hi50(j), lo80(j) <= b && b <= hi80(j),
                    lo95(j) <= b && b <= hi95(j));
      }
      std::printf(",%.10g,%d,%d\n", t.sigma2, rank_s2, a.ranks);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::cerr << "dpmu_sbc_noise_aware: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
