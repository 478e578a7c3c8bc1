// The DP F-test of Alabi & Vadhan (2022) from clipped, Gaussian-noised moments (docs/methods.md
// "DP F-test").
#include "dpmu/core/dp_f_test.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

double zcdp_to_epsilon(double rho, double delta) {
  check_positive_finite("zcdp_to_epsilon", "rho", rho);
  check_open_interval("zcdp_to_epsilon", "delta", delta, 0.0, 1.0);
  return rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta));
}

double zcdp_rho_for_epsilon(double epsilon, double delta) {
  check_positive_finite("zcdp_rho_for_epsilon", "epsilon", epsilon);
  check_open_interval("zcdp_rho_for_epsilon", "delta", delta, 0.0, 1.0);
  const double l = std::log(1.0 / delta);
  // √ρ = √(l + ε) − √l, written as ε/(√(l + ε) + √l) to avoid cancellation for small ε
  const double root = epsilon / (std::sqrt(l + epsilon) + std::sqrt(l));
  return root * root;
}

namespace {

/// Range of v_j v_l over [lj, uj] × [ll, ul] (bilinear: extremes at the corners).
double product_range(double lj, double uj, double ll, double ul) {
  const double c[4] = {lj * ll, lj * ul, uj * ll, uj * ul};
  return *std::max_element(c, c + 4) - *std::min_element(c, c + 4);
}

/// Range of v² over [l, u].
double square_range(double l, double u) {
  const double hi = std::max(l * l, u * u);
  const double lo = (l <= 0.0 && u >= 0.0) ? 0.0 : std::min(l * l, u * u);
  return hi - lo;
}

}  // namespace

DpFTestRelease::DpFTestRelease(DpFTestSettings s) : settings_(std::move(s)) {
  const char* fn = "DpFTestRelease";
  check_positive_finite(fn, "rho", settings_.rho);
  if (settings_.p0 < 1) throw_domain(fn, "p0 (H0 columns with the intercept)", settings_.p0, "at least 1");
  if (settings_.q < 1) throw_domain(fn, "q (tested predictors)", settings_.q, "at least 1");
  if (settings_.n <= static_cast<std::size_t>(settings_.p0 + settings_.q + 1)) {
    throw_domain(fn, "n", static_cast<double>(settings_.n), "greater than p0 + q + 1");
  }
  const int k1 = settings_.p0 + settings_.q;  // predictors + response
  if (settings_.bounds.size() != 1 && settings_.bounds.size() != static_cast<std::size_t>(k1)) {
    throw_invalid(fn, "give 1 bound pair or one per column (" + std::to_string(k1) +
                          ": common predictors, tested predictors, response), got " +
                          std::to_string(settings_.bounds.size()));
  }
  lower_.resize(k1);
  upper_.resize(k1);
  for (int j = 0; j < k1; ++j) {
    const ColumnBounds& b = settings_.bounds.size() == 1 ? settings_.bounds[0] : settings_.bounds[j];
    check_ordered_limits(fn, "lower bound", b.lower, "upper bound", b.upper);
    lower_(j) = b.lower;
    upper_(j) = b.upper;
  }
  const int d = dimension();
  const double n = static_cast<double>(settings_.n);
  sensitivity_ = Eigen::MatrixXd::Zero(d, d);
  for (int j = 0; j < d; ++j) {
    for (int l = j; l < d; ++l) {
      double s = 0.0;
      if (j == 0 && l == 0) {
        s = 0.0;
      } else if (j == 0) {
        s = upper_(l - 1) - lower_(l - 1);
      } else if (j == l) {
        s = square_range(lower_(j - 1), upper_(j - 1));
      } else {
        s = product_range(lower_(j - 1), upper_(j - 1), lower_(l - 1), upper_(l - 1));
      }
      sensitivity_(j, l) = sensitivity_(l, j) = s / n;
    }
  }
  const double rho_each = settings_.rho / released_moments();
  sigma_ = sensitivity_ / std::sqrt(2.0 * rho_each);
}

PrivacyGuarantee DpFTestRelease::privacy(double delta) const {
  PrivacyGuarantee g;
  g.epsilon = zcdp_to_epsilon(settings_.rho, delta);
  g.delta = delta;
  g.neighbouring = "replace one row (n public)";
  g.mechanism = "Gaussian noise on the " + std::to_string(released_moments()) +
                " unique moments (1/n) sum z z' of the clipped rows z = (1, predictors, response), rho-zCDP with rho "
                "split equally (Alabi & Vadhan 2022); (epsilon, delta) = rho + 2 sqrt(rho log(1/delta))";
  g.sensitivity_name = "max_moment_sensitivity";
  g.sensitivity = sensitivity_.maxCoeff();
  g.sampler =
      "floating-point Gaussian from the kernel CSPRNG; NOT hardened against floating-point attacks (Mironov 2012)";
  return g;
}

Eigen::MatrixXd DpFTestRelease::confidential_moments(const Eigen::Ref<const Eigen::MatrixXd>& rows) const {
  const int k1 = settings_.p0 + settings_.q;
  if (rows.rows() != static_cast<Eigen::Index>(settings_.n) || rows.cols() != k1) {
    throw_invalid("DpFTestRelease", "the rows are " + std::to_string(rows.rows()) + "x" + std::to_string(rows.cols()) +
                                        ", expected n x (p0 + q) = " + std::to_string(settings_.n) + "x" +
                                        std::to_string(k1));
  }
  const int d = dimension();
  Eigen::MatrixXd z(rows.rows(), d);
  z.col(0).setOnes();
  // Clip into the box; a non-finite value takes a public value in it (+inf the upper bound, -inf and
  // NaN the lower), so missing values neither stop the release nor change the sensitivity.
  for (int j = 0; j < k1; ++j) {
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
      const double v = rows(i, j);
      z(i, j + 1) = std::isnan(v) ? lower_(j) : std::clamp(v, lower_(j), upper_(j));
    }
  }
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(d, d);
  m.selfadjointView<Eigen::Lower>().rankUpdate(z.transpose(), 1.0 / static_cast<double>(settings_.n));
  Eigen::MatrixXd full = m.selfadjointView<Eigen::Lower>();
  full(0, 0) = 1.0;
  return full;
}

template <class Rng>
Eigen::MatrixXd DpFTestRelease::noisy(const Eigen::MatrixXd& m, Rng& rng) const {
  Eigen::MatrixXd out = m;
  const int d = dimension();
  for (int j = 0; j < d; ++j) {
    for (int l = j; l < d; ++l) {
      if (j == 0 && l == 0) continue;
      out(j, l) += sigma_(j, l) * standard_normal(rng);
      out(l, j) = out(j, l);
    }
  }
  return out;
}

DpFTestOutput DpFTestRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& rows, NoiseSource& noise) const {
  const Eigen::MatrixXd m = confidential_moments(rows);
  DpFTestOutput out;
  out.moments = noisy(m, noise);
  out.statistic = f_statistic(out.moments);
  if (!noise.is_secure()) out.confidential_moments = m;
  return out;
}

double DpFTestRelease::simulated_statistic(const Eigen::Ref<const Eigen::MatrixXd>& rows, RngStream& rng) const {
  return f_statistic(noisy(confidential_moments(rows), rng));
}

namespace {

/// n(M_yy − M_yS M_SS^{-1} M_Sy) for S = {0, …, s−1}, y = last; NaN if M_SS is not positive definite.
double residual_sum_of_squares(const Eigen::Ref<const Eigen::MatrixXd>& m, int s, double n) {
  const int y = static_cast<int>(m.rows()) - 1;
  const Eigen::LLT<Eigen::MatrixXd> llt(m.topLeftCorner(s, s));
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::quiet_NaN();
  const Eigen::VectorXd c = m.col(y).head(s);
  const Eigen::VectorXd w = llt.matrixL().solve(c);
  return n * (m(y, y) - w.squaredNorm());
}

}  // namespace

double DpFTestRelease::f_statistic(const Eigen::Ref<const Eigen::MatrixXd>& m) const {
  const double n = static_cast<double>(settings_.n);
  const int p0 = settings_.p0, q = settings_.q;
  const double rss1 = residual_sum_of_squares(m, p0 + q, n);
  const double rss0 = residual_sum_of_squares(m, p0, n);
  if (std::isnan(rss1) || std::isnan(rss0)) return std::numeric_limits<double>::quiet_NaN();
  const double explained = rss0 - rss1;  // ≥ 0 up to rounding when M_SS of H1 is positive definite
  if (!(rss1 > 0.0)) return std::numeric_limits<double>::infinity();
  return (std::max(explained, 0.0) / q) / (rss1 / (n - p0 - q));
}

std::vector<double> DpFTestRelease::null_statistics(const Eigen::Ref<const Eigen::MatrixXd>& m, std::size_t K,
                                                    RngStream& rng) const {
  const int k = settings_.p0 - 1 + settings_.q;  // predictors
  const int p0 = settings_.p0;
  const double n = static_cast<double>(settings_.n);
  // Private estimates (post-processing of the released M).
  const Eigen::VectorXd mu = m.row(0).segment(1, k).transpose();
  Eigen::MatrixXd sigma = (n / (n - 1.0)) * (m.block(1, 1, k, k) - mu * mu.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sigma);
  const Eigen::MatrixXd root =
      eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() * eig.eigenvectors().transpose();
  const int y = dimension() - 1;
  Eigen::VectorXd beta0 = Eigen::VectorXd::Zero(p0);
  double sigma0 = 0.0;
  const Eigen::LLT<Eigen::MatrixXd> llt(m.topLeftCorner(p0, p0));
  if (llt.info() == Eigen::Success) {
    beta0 = llt.solve(m.col(y).head(p0));
    const double rss0 = n * (m(y, y) - m.col(y).head(p0).dot(beta0));
    sigma0 = std::sqrt(std::max(rss0 / (n - p0), 0.0));
  } else {  // the noisy H0 block is singular: intercept-only null with the noisy mean and variance of y
    beta0(0) = m(0, y);
    sigma0 = std::sqrt(std::max((n / (n - 1.0)) * (m(y, y) - m(0, y) * m(0, y)), 0.0));
  }
  std::vector<double> out;
  out.reserve(K);
  const auto rows_n = static_cast<Eigen::Index>(settings_.n);
  Eigen::MatrixXd rows(rows_n, k + 1);
  Eigen::VectorXd z(k);
  for (std::size_t r = 0; r < K; ++r) {
    for (Eigen::Index i = 0; i < rows_n; ++i) {
      for (int j = 0; j < k; ++j) z(j) = standard_normal_ziggurat(rng);
      const Eigen::VectorXd x = mu + root * z;
      rows.row(i).head(k) = x.transpose();
      rows(i, k) = beta0(0) + x.head(p0 - 1).dot(beta0.tail(p0 - 1)) + sigma0 * standard_normal_ziggurat(rng);
    }
    out.push_back(simulated_statistic(rows, rng));
  }
  return out;
}

double DpFTestRelease::monte_carlo_p_value(double statistic, const std::vector<double>& null) {
  const auto key = [](double v) { return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v; };
  const double t = key(statistic);
  std::size_t at_least = 0;
  for (double v : null) at_least += key(v) >= t ? 1 : 0;
  return (1.0 + static_cast<double>(at_least)) / (static_cast<double>(null.size()) + 1.0);
}

}  // namespace dpmu::core
