// AdaSSP (Wang 2018, Algorithm 2; docs/methods.md "AdaSSP").
#include "dpmu/core/adassp.hpp"

#include <cmath>
#include <limits>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/mechanisms.hpp"

namespace dpmu::core {

AdaSspRelease::AdaSspRelease(AdaSspSettings s) : settings_(s) {
  const char* fn = "AdaSspRelease";
  check_positive_finite(fn, "epsilon", s.epsilon);
  check_open_interval(fn, "delta", s.delta, 0.0, 1.0);
  if (s.n < 1) throw_domain(fn, "n", 0.0, "at least 1");
  if (s.d < 1) throw_domain(fn, "d", s.d, "at least 1");
  check_positive_finite(fn, "bound_x", s.bound_x);
  check_positive_finite(fn, "bound_y", s.bound_y);
  check_open_interval(fn, "failure", s.failure, 0.0, 1.0);
  const AdaSspSensitivities sens = sensitivities();
  const double parts = s.release_yty ? 4.0 : 3.0;
  sigma_lambda_ = analytic_gaussian_sigma(s.epsilon / parts, s.delta / parts, sens.lambda_min);
  sigma_gram_ = analytic_gaussian_sigma(s.epsilon / parts, s.delta / parts, sens.gram);
  sigma_xty_ = analytic_gaussian_sigma(s.epsilon / parts, s.delta / parts, sens.xty);
  if (s.release_yty) sigma_yty_ = analytic_gaussian_sigma(s.epsilon / parts, s.delta / parts, sens.yty);
}

AdaSspSensitivities AdaSspRelease::sensitivities() const {
  const double bx2 = settings_.bound_x * settings_.bound_x;
  return {bx2, std::sqrt(2.0) * bx2, 2.0 * settings_.bound_x * settings_.bound_y,
          settings_.bound_y * settings_.bound_y};
}

double AdaSspRelease::gdp_mu() const {
  const AdaSspSensitivities sens = sensitivities();
  const double mu3 = std::hypot(sens.lambda_min / sigma_lambda_, sens.gram / sigma_gram_, sens.xty / sigma_xty_);
  return settings_.release_yty ? std::hypot(mu3, sens.yty / sigma_yty_) : mu3;
}

double AdaSspRelease::eta() const {
  const double d = settings_.d;
  return sigma_gram_ * std::sqrt(d * std::log(2.0 * d * d / settings_.failure));
}

PrivacyGuarantee AdaSspRelease::privacy() const {
  PrivacyGuarantee g;
  g.epsilon = settings_.epsilon;
  g.delta = settings_.delta;
  g.neighbouring = "replace one row (n public)";
  g.mechanism = settings_.release_yty
                    ? "AdaSSP (Wang 2018, Alg. 2) with y'y: analytic Gaussian noise at (epsilon/4, delta/4) on "
                      "lambda_min(X'X), on the unique entries of X'X, on X'y and on y'y of the clipped data; basic "
                      "composition"
                    : "AdaSSP (Wang 2018, Alg. 2): analytic Gaussian noise at (epsilon/3, delta/3) on lambda_min(X'X), "
                      "on the unique entries of X'X and on X'y of the clipped data; basic composition";
  g.sensitivity_name = "l2_sensitivity_gram";
  g.sensitivity = sensitivities().gram;
  g.sampler =
      "floating-point Gaussian from the kernel CSPRNG; NOT hardened against floating-point attacks (Mironov 2012)";
  // For the ledger's tight accountant: the three releases are Gaussian mechanisms with μ_i = Δ_i/σ_i
  // (each the same μ of the analytic Gaussian at (ε/3, δ/3)), and Gaussian mechanisms compose
  // exactly: the release is μ-GDP with μ = √(μ_λ² + μ_XX² + μ_Xy²) (Dong, Roth & Su 2022, Cor. 3.3).
  // It is recorded as one Gaussian of that μ: noise_scale = Δ_XX/μ (so sensitivity/noise_scale = μ).
  // Basic composition's (ε, δ) is a valid bound of the same mechanism, so δ_μ(ε) ≤ δ.
  g.noise_kind = "gaussian";
  g.noise_scale = g.sensitivity / gdp_mu();
  return g;
}

void AdaSspRelease::clipped_statistics(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                       const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::MatrixXd& xtx,
                                       Eigen::VectorXd& xty, std::size_t* clipped_rows,
                                       std::size_t* clipped_responses) const {
  const char* fn = "AdaSspRelease";
  if (x.rows() != static_cast<Eigen::Index>(settings_.n) || y.size() != x.rows() || x.cols() != settings_.d) {
    throw_invalid(fn, "the data are " + std::to_string(x.rows()) + "x" + std::to_string(x.cols()) + " with " +
                          std::to_string(y.size()) + " responses; expected n x d = " + std::to_string(settings_.n) +
                          "x" + std::to_string(settings_.d));
  }
  check_all_finite(fn, "x", x);
  check_all_finite(fn, "y", y);
  Eigen::MatrixXd xc = x;
  Eigen::VectorXd yc = y;
  std::size_t rows = 0, responses = 0;
  for (Eigen::Index i = 0; i < xc.rows(); ++i) {
    const double norm = xc.row(i).norm();
    if (norm > settings_.bound_x) {
      xc.row(i) *= settings_.bound_x / norm;
      ++rows;
    }
    if (std::abs(yc(i)) > settings_.bound_y) {
      yc(i) = std::copysign(settings_.bound_y, yc(i));
      ++responses;
    }
  }
  xtx = Eigen::MatrixXd::Zero(settings_.d, settings_.d);
  xtx.selfadjointView<Eigen::Lower>().rankUpdate(xc.transpose());
  xtx = xtx.selfadjointView<Eigen::Lower>();
  xty = xc.transpose() * yc;
  if (clipped_rows) *clipped_rows = rows;
  if (clipped_responses) *clipped_responses = responses;
}

AdaSspOutput AdaSspRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                    const Eigen::Ref<const Eigen::VectorXd>& y, NoiseSource& noise) const {
  Eigen::MatrixXd xtx;
  Eigen::VectorXd xty;
  std::size_t clipped_rows = 0, clipped_responses = 0;
  clipped_statistics(x, y, xtx, xty, &clipped_rows, &clipped_responses);
  double yty = std::numeric_limits<double>::quiet_NaN();
  if (settings_.release_yty) {  // of the clamped responses, as X'y
    yty = y.array().abs().min(settings_.bound_y).square().sum();
  }
  AdaSspOutput out = release_statistics(xtx, xty, noise, yty);
  if (out.diagnostics) {
    out.diagnostics->clipped_rows = clipped_rows;
    out.diagnostics->clipped_responses = clipped_responses;
  }
  return out;
}

AdaSspOutput AdaSspRelease::release_statistics(const Eigen::Ref<const Eigen::MatrixXd>& xtx,
                                               const Eigen::Ref<const Eigen::VectorXd>& xty, NoiseSource& noise,
                                               double yty) const {
  constexpr const char* fn = "AdaSspRelease::release_statistics";
  const int d = settings_.d;
  if (xtx.rows() != d || xtx.cols() != d || xty.size() != d) {
    throw_invalid(fn, "xtx must be d x d and xty of length d = " + std::to_string(d) + ", got " +
                          std::to_string(xtx.rows()) + "x" + std::to_string(xtx.cols()) + " and " +
                          std::to_string(xty.size()));
  }
  check_all_finite(fn, "xtx", xtx);
  check_all_finite(fn, "xty", xty);
  if (settings_.release_yty && !std::isfinite(yty)) throw_domain(fn, "yty", yty, "finite (release_yty is set)");
  const double lambda_min =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(xtx, Eigen::EigenvaluesOnly).eigenvalues()(0);
  AdaSspOutput out;
  const double shift = sigma_lambda_ * std::sqrt(std::log(6.0 / settings_.delta));
  out.lambda_min_noisy = std::max(lambda_min + sigma_lambda_ * standard_normal(noise) - shift, 0.0);
  out.ridge = std::max(0.0, eta() - out.lambda_min_noisy);
  out.gram = xtx;
  for (int j = 0; j < d; ++j) {
    for (int l = j; l < d; ++l) {
      out.gram(j, l) += sigma_gram_ * standard_normal(noise);
      out.gram(l, j) = out.gram(j, l);
    }
  }
  out.xty = xty;
  for (int j = 0; j < d; ++j) out.xty(j) += sigma_xty_ * standard_normal(noise);
  if (settings_.release_yty) out.yty = yty + sigma_yty_ * standard_normal(noise);
  const Eigen::MatrixXd a = out.gram + out.ridge * Eigen::MatrixXd::Identity(d, d);
  out.coefficients = a.colPivHouseholderQr().solve(out.xty);
  if (!noise.is_secure()) {
    AdaSspDiagnostics diag;
    diag.lambda_min = lambda_min;
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(xtx);
    diag.ols = (ldlt.info() == Eigen::Success && lambda_min > 0.0)
                   ? Eigen::VectorXd(ldlt.solve(xty))
                   : Eigen::VectorXd::Constant(d, std::numeric_limits<double>::quiet_NaN());
    out.diagnostics = std::move(diag);
  }
  return out;
}

}  // namespace dpmu::core
