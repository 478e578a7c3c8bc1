// A downstream program: a Bayes factor from the core and a model average from the API of an
// installed dpmu, each checked against a closed form. Exit 0 on success.
#include <cmath>
#include <cstdio>
#include <dpmu/api/bma.hpp>
#include <dpmu/core/bayes_factor.hpp>

int main() {
  // g-prior, g = n: log B10 = ((n−p−1)/2) log(1+g) − ((n−1)/2) log(1 + g(1−R²)) (Liang et al. 2008, Eq. 5)
  const double n = 50.0, r2 = 0.3;
  const int p = 2;
  dpmu::core::Prior prior;
  prior.kind = dpmu::core::PriorKind::g_prior;
  const double got = dpmu::core::log_bayes_factor(prior, std::log1p(-r2), n, p, 1);
  const double want = 0.5 * (n - p - 1) * std::log1p(n) - 0.5 * (n - 1) * std::log1p(n * (1 - r2));
  if (std::abs(got - want) > 1e-10 * std::abs(want)) {
    std::printf("log B10 = %.17g, expected %.17g\n", got, want);
    return 1;
  }
  // One predictor, BIC: the model-averaged intercept is the mean of y.
  Eigen::MatrixXd x(5, 1);
  x << 1, 2, 3, 4, 5;
  Eigen::VectorXd y(5);
  y << 1.1, 1.9, 3.2, 3.9, 5.1;
  dpmu::api::BmaSettings settings;
  settings.prior = "bic";
  const dpmu::api::BmaFit fit = dpmu::api::bma(x, y, {"x"}, "y", settings);
  if (!fit.posterior.intercept || std::abs(*fit.posterior.intercept - y.mean()) > 1e-12) {
    std::printf("intercept differs from the mean of y\n");
    return 1;
  }
  std::printf("consumer ok: log B10 = %.12g, PIP(x) = %.6f\n", got, fit.posterior.posterior_inclusion_probability(0));
  return 0;
}
