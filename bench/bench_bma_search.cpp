// Model searches end to end (docs/bma.md "Cost of the model search", docs/performance.md "Model
// searches"): one search per process, so that the peak resident memory is the search's own.
//
//   dpmu_bench_bma_search mcmc P N [MAX_MODELS] [MAX_ITERATIONS] [SIGNAL]
//   dpmu_bench_bma_search enumeration P N
//
// Data: N rows, P correlated standard normal predictors; y = 0.3 x1 + 0.2 x2 + 0.15 x3 + noise
// (SIGNAL = 0: y is pure noise, a flat posterior that makes the chain visit as many models as it
// can). Prints one JSON line: the search, CPU seconds, peak RSS (MB), iterations, models stored,
// evaluations of unstored models, convergence. Zellner-Siow prior, beta-binomial(1,1) model prior.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/random.hpp"

namespace {

Eigen::MatrixXd data_gram(int p, int n, bool signal) {
  dpmu::core::RngStream rng(11, 12, 13, dpmu::core::StreamPurpose::data);
  Eigen::MatrixXd d(n, p + 1);
  for (int i = 0; i < n; ++i) {
    const double common = dpmu::core::standard_normal(rng);
    double y = dpmu::core::standard_normal(rng);
    for (int j = 0; j < p; ++j) {
      d(i, j) = 0.5 * common + dpmu::core::standard_normal(rng);
      if (signal && j < 3) y += (0.3 - 0.075 * j) * d(i, j);
    }
    d(i, p) = y;
  }
  d.rowwise() -= d.colwise().mean();
  return d.transpose() * d;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s mcmc|enumeration P N [MAX_MODELS] [MAX_ITERATIONS] [SIGNAL]\n", argv[0]);
    return 2;
  }
  const std::string search = argv[1];
  const int p = std::atoi(argv[2]);
  const int n = std::atoi(argv[3]);
  const bool signal = argc < 7 || std::atoi(argv[6]) != 0;
  const Eigen::MatrixXd g = data_gram(p, n, signal);
  const auto cp = dpmu::core::parse_coefficient_prior("zellner-siow");
  const auto mp = dpmu::core::parse_model_prior("beta-binomial:1,1");
  const double rss_before = peak_rss_mb();
  const double t0 = cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  if (search == "enumeration") {
    dpmu::core::BmaOptions opt;
    opt.keep_all_models = false;
    const auto r = dpmu::core::bayesian_model_averaging(g, n, cp, mp, opt);
    std::printf(
        "{\"search\": \"enumeration\", \"p\": %d, \"n\": %d, \"models\": %llu, \"cpu_s\": %.3f, \"wall_s\": %.3f, "
        "\"peak_rss_mb\": %.1f, \"rss_before_mb\": %.1f}\n",
        p, n, static_cast<unsigned long long>(r.models_evaluated + r.models_rank_deficient), cpu_seconds() - t0,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(), peak_rss_mb(), rss_before);
    return 0;
  }
  dpmu::core::McmcOptions opt;
  if (argc > 4) opt.max_models = std::strtoull(argv[4], nullptr, 10);
  if (argc > 5) opt.max_iterations = std::strtoull(argv[5], nullptr, 10);
  dpmu::core::RngStream rng(21, 22, 23, dpmu::core::StreamPurpose::noise);
  dpmu::core::McmcDiagnostics diag;
  const auto r = dpmu::core::bayesian_model_averaging_mcmc(g, n, cp, mp, rng, opt, &diag);
  std::printf(
      "{\"search\": \"mcmc\", \"p\": %d, \"n\": %d, \"signal\": %s, \"max_models\": %llu, \"max_iterations\": %llu, "
      "\"iterations\": %llu, \"converged\": %s, \"models_stored\": %llu, \"evaluations_unstored\": %llu, "
      "\"acceptance\": %.3f, \"pip_x1\": %.4f, \"cpu_s\": %.3f, \"wall_s\": %.3f, \"peak_rss_mb\": %.1f, "
      "\"rss_before_mb\": %.1f}\n",
      p, n, signal ? "true" : "false", static_cast<unsigned long long>(opt.max_models),
      static_cast<unsigned long long>(diag.max_iterations), static_cast<unsigned long long>(diag.iterations),
      diag.converged ? "true" : "false", static_cast<unsigned long long>(diag.models_visited),
      static_cast<unsigned long long>(diag.evaluations_unstored), diag.acceptance_rate,
      r.posterior_inclusion_probability(0), cpu_seconds() - t0,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(), peak_rss_mb(), rss_before);
  return 0;
}
