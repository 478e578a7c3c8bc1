// Cost per release of the noise-aware sampler (core::noise_aware_sampler; docs/performance.md
// "Noise-aware sampler"): one Laplace release per p of a unit-box data set (n rows, x_j ~ U(0, 1),
// y = clamp(0.5 + Σ_j β_j (x_j − 0.5) + 0.2 z, 0, 1), β = (1, 0.3, 0, …)), the sampler with its
// default options, one JSON line per p with the thread CPU time, the convergence verdict and the
// smallest PIP ESS / largest PIP R-hat. Usage: dpmu_bench_noise_aware_sampler [n] [epsilon] [p ...]
// (defaults 10000, 1, and p = 2 6 10 15). Plain main; one core; no threads.

#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dpmu/core/noise_aware_sampler.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const double n = argc > 1 ? std::atof(argv[1]) : 1e4;
  const double epsilon = argc > 2 ? std::atof(argv[2]) : 1.0;
  std::vector<int> ps;
  for (int i = 3; i < argc; ++i) ps.push_back(std::atoi(argv[i]));
  if (ps.empty()) ps = {2, 6, 10, 15};
  for (int p : ps) {
    RngStream data(1, 100 + static_cast<std::uint64_t>(p), 0, StreamPurpose::data);
    Eigen::MatrixXd d(static_cast<Eigen::Index>(n), p + 1);
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      double y = 0.5 + 0.2 * standard_normal(data);
      for (int j = 0; j < p; ++j) {
        d(i, j) = uniform_open01(data);
        const double b = j == 0 ? 1.0 : (j == 1 ? 0.3 : 0.0);
        y += b * (d(i, j) - 0.5);
      }
      d(i, p) = std::min(1.0, std::max(0.0, y));
    }
    d.rowwise() -= d.colwise().mean();
    const Eigen::MatrixXd gram = d.transpose() * d;
    SspMechanism mech;
    mech.kind = SspMechanismKind::laplace;
    mech.p = p;
    mech.epsilon = epsilon;
    mech.noise_l1_sensitivity = (n - 1.0) / n * (p + 1.0) * (p + 2.0) / 2.0;
    RngStream noise(1, 200 + static_cast<std::uint64_t>(p), 0, StreamPurpose::noise);
    const Eigen::MatrixXd gstar = gram + ssp_noise(mech, noise);
    Prior zs;
    zs.kind = PriorKind::zellner_siow;
    const AugmentedModelPrior prior = default_augmented_prior(Eigen::VectorXd::Ones(p + 1), zs);
    RngStream rng(1, 300 + static_cast<std::uint64_t>(p), 0, StreamPurpose::calibration);
    const double t0 = cpu_seconds();
    const NoiseAwareSamplerResult r = noise_aware_sampler(gstar, mech, n, prior, ModelPrior{}, rng);
    const double secs = cpu_seconds() - t0;
    double pip_ess = INFINITY;
    double pip_rhat = 0.0;
    for (const auto& m : r.monitored) {
      if (m.name.rfind("pip[", 0) == 0) {
        pip_ess = std::min(pip_ess, m.summary.ess_bulk);
        pip_rhat = std::max(pip_rhat, m.summary.rhat);
      }
    }
    std::printf(
        "{\"p\": %d, \"n\": %.0f, \"epsilon\": %g, \"cpu_seconds\": %.2f, \"converged\": %s, \"iterations_per_chain\": "
        "%d, \"chains\": %d, \"warmup\": %d, \"max_rhat\": %.4f, \"min_ess\": %.0f, \"pip_max_rhat\": %.4f, "
        "\"pip_min_ess\": %.0f, \"log_density_evaluations\": %.0f, \"pip0\": %.3f, \"pip_last\": %.3f}\n",
        p, n, epsilon, secs, r.converged ? "true" : "false", r.iterations, r.chains, r.warmup, r.max_rhat, r.min_ess,
        pip_rhat, pip_ess, r.log_density_evaluations, r.posterior.posterior_inclusion_probability(0),
        r.posterior.posterior_inclusion_probability(p - 1));
    std::fflush(stdout);
  }
  return 0;
}
