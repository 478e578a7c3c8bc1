#include "dpmu/core/ssp.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

namespace dpmu::core {

namespace {
double bound_squared(double lower, double upper) { return std::max(lower * lower, upper * upper); }

void check_bounds(const char* fn, double lower, double upper) {
  check_finite(fn, "lower", lower);
  check_finite(fn, "upper", upper);
  if (!(lower < 0.0)) throw_domain(fn, "lower", lower, "< 0 (bounds of centred data)");
  if (!(upper > 0.0)) throw_domain(fn, "upper", upper, "> 0 (bounds of centred data)");
}

/// P(|E_ij| ≤ x) for E_ij = B²√W·Z, W ~ χ²_k.
double wishart_abs_cdf(double x, double k, double scale) {
  if (x <= 0.0) return 0.0;
  const boost::math::chi_squared_distribution<double> chi(k);
  const double c = x / scale;
  const auto f = [&](double w) {
    if (w <= 0.0) return 0.0;
    return std::erf(c / std::sqrt(2.0 * w)) * boost::math::pdf(chi, w);
  };
  const double sd = std::sqrt(2.0 * k);
  const double lo = std::max(0.0, k - 40.0 * sd);
  const double hi = k + 60.0 * sd + 100.0;
  double total = 0.0;
  constexpr int kPanels = 32;
  for (int i = 0; i < kPanels; ++i) {
    const double a = lo + (hi - lo) * i / kPanels;
    const double b = lo + (hi - lo) * (i + 1) / kPanels;
    total += boost::math::quadrature::gauss_kronrod<double, 31>::integrate(f, a, b, 10, 1e-13);
  }
  return std::min(1.0, total);
}
}  // namespace

SspMechanismKind parse_ssp_mechanism(std::string_view name) {
  std::optional<SspMechanismKind> found;
  std::string accepted;
  for_each_ssp_mechanism([&](auto unit) {
    using Unit = typename decltype(unit)::type;
    if (name == Unit::name) found = Unit::kind;
    accepted += (accepted.empty() ? "" : " or ") + std::string(Unit::name);
  });
  if (found) return *found;
  throw_invalid("parse_ssp_mechanism", "unknown mechanism '" + std::string(name) + "'; use " + accepted);
}

std::string_view to_string(SspMechanismKind kind) {
  return visit_ssp_mechanism(kind, [](auto unit) { return decltype(unit)::type::name; });
}

void SspLaplaceMechanism::check_sensitivity(const char* fn, const SspMechanism& m) {
  check_positive_finite(fn, "noise_l1_sensitivity", m.noise_l1_sensitivity.value_or(std::nan("")));
}
void SspLaplaceMechanism::check_privacy(const char* /*fn*/, const SspMechanism& /*m*/) {}
void SspLaplaceMechanism::check_release_privacy(const char* fn, double /*epsilon*/, double delta) {
  if (delta != 0.0) throw_domain(fn, "delta", delta, "0 for the Laplace mechanism (epsilon-DP)");
}
double SspLaplaceMechanism::absolute_quantile(const SspMechanism& m, double target) {
  return -ssp_laplace_scale(m) * std::log1p(-target);
}

void SspWishartMechanism::check_sensitivity(const char* fn, const SspMechanism& m) {
  check_positive_finite(fn, "noise_row_norm_squared", m.noise_row_norm_squared.value_or(std::nan("")));
}
void SspWishartMechanism::check_privacy(const char* fn, const SspMechanism& m) {
  check_open_interval(fn, "epsilon", m.epsilon, 0.0, 1.0);
  if (!(m.delta > 0.0 && m.delta <= 1.0)) throw_domain(fn, "delta", m.delta, "in (0, 1]");
}
void SspWishartMechanism::check_release_privacy(const char* fn, double epsilon, double delta) {
  check_open_interval(fn, "epsilon", epsilon, 0.0, 1.0);
  check_open_interval(fn, "delta", delta, 0.0, 1.0);
}
double SspWishartMechanism::absolute_quantile(const SspMechanism& m, double target) {
  const WishartParameters w = ssp_wishart_parameters(m);
  double lo = 0.0;
  double hi = w.scale * std::sqrt(w.degrees_of_freedom);
  while (wishart_abs_cdf(hi, w.degrees_of_freedom, w.scale) < target) hi *= 2.0;
  for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (wishart_abs_cdf(mid, w.degrees_of_freedom, w.scale) < target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

void check_ssp_mechanism(const SspMechanism& m) {
  constexpr const char* fn = "check_ssp_mechanism";
  if (m.p < 1) throw_domain(fn, "p", m.p, ">= 1");
  visit_ssp_mechanism(m.kind, [&](auto unit) {
    using Unit = typename decltype(unit)::type;
    if (m.noise_l1_sensitivity || m.noise_row_norm_squared) {
      Unit::check_sensitivity(fn, m);
    } else {
      check_bounds(fn, m.lower, m.upper);
    }
    check_positive_finite(fn, "epsilon", m.epsilon);
    Unit::check_privacy(fn, m);
  });
}

double l1_sensitivity(int p, double lower, double upper) {
  if (p < 1) throw_domain("l1_sensitivity", "p", p, ">= 1");
  check_bounds("l1_sensitivity", lower, upper);
  return (p + 1.0) * (p + 2.0) * bound_squared(lower, upper);
}

double ssp_l1_sensitivity(const SspMechanism& m) {
  check_ssp_mechanism(m);
  return m.noise_l1_sensitivity ? *m.noise_l1_sensitivity : l1_sensitivity(m.p, m.lower, m.upper);
}

double ssp_laplace_scale(const SspMechanism& m) { return ssp_l1_sensitivity(m) / m.epsilon; }

WishartParameters ssp_wishart_parameters(const SspMechanism& m) {
  check_ssp_mechanism(m);
  if (m.kind != SspMechanismKind::wishart) throw_invalid("ssp_wishart_parameters", "mechanism is not wishart");
  WishartParameters w;
  w.dimension = m.p + 1;
  w.degrees_of_freedom = std::floor(m.p + 1.0 + 28.0 * std::log(4.0 / m.delta) / (m.epsilon * m.epsilon));
  w.scale = m.noise_row_norm_squared ? *m.noise_row_norm_squared : (m.p + 1.0) * bound_squared(m.lower, m.upper);
  return w;
}

ThresholdReference parse_threshold_reference(std::string_view name) {
  if (name == "absolute") return ThresholdReference::absolute;
  if (name == "signed") return ThresholdReference::signed_quantile;
  throw_invalid("parse_threshold_reference",
                "unknown threshold reference '" + std::string(name) + "'; use absolute or signed");
}

std::string_view to_string(ThresholdReference reference) {
  return reference == ThresholdReference::absolute ? "absolute" : "signed";
}

double threshold_value(const SspMechanism& m, double percentile, ThresholdReference reference) {
  constexpr const char* fn = "threshold_value";
  check_ssp_mechanism(m);
  if (reference == ThresholdReference::signed_quantile) {
    check_open_interval(fn, "percentile", percentile, 0.5, 1.0);
  } else {
    check_open_interval(fn, "percentile", percentile, 0.0, 1.0);
  }
  // Target for P(|E| ≤ x).
  const double target = reference == ThresholdReference::absolute ? percentile : 2.0 * percentile - 1.0;
  return visit_ssp_mechanism(m.kind, [&](auto unit) { return decltype(unit)::type::absolute_quantile(m, target); });
}

Eigen::MatrixXd hard_threshold(const Eigen::Ref<const Eigen::MatrixXd>& g, double threshold) {
  if (g.rows() != g.cols()) throw_invalid("hard_threshold", "noisy_gram must be square");
  if (!(threshold >= 0.0)) throw_domain("hard_threshold", "threshold", threshold, ">= 0");
  Eigen::MatrixXd out = g;
  for (Eigen::Index j = 0; j < g.cols(); ++j) {
    for (Eigen::Index i = 0; i < g.rows(); ++i) {
      if (i != j && !(std::abs(g(i, j)) >= threshold)) out(i, j) = 0.0;
    }
  }
  return out;
}

double wishart_regularization(const SspMechanism& m, double nu) {
  check_open_interval("wishart_regularization", "nu", nu, 0.0, 1.0);
  const WishartParameters w = ssp_wishart_parameters(m);
  const double k = w.degrees_of_freedom;
  const double s = std::max(0.0, std::sqrt(k) - std::sqrt(m.p + 1.0) - std::sqrt(2.0 * std::log(1.0 / nu)));
  return w.scale * (k - s * s);
}

bool is_positive_definite(const Eigen::Ref<const Eigen::MatrixXd>& a) {
  if (a.rows() != a.cols() || !a.allFinite()) return false;
  Eigen::LLT<Eigen::MatrixXd> llt(a);
  return llt.info() == Eigen::Success;
}

RegularizedGram regularize(const Eigen::Ref<const Eigen::MatrixXd>& a, double r) {
  constexpr const char* fn = "regularize";
  if (a.rows() != a.cols()) throw_invalid(fn, "matrix must be square");
  check_all_finite(fn, "matrix", a);
  if (!(std::isfinite(r) && r >= 0.0)) throw_domain(fn, "regularization", r, "finite and >= 0");
  RegularizedGram out;
  out.requested = r;
  out.regularization = r;
  const Eigen::Index d = a.rows();
  out.matrix = a;
  out.matrix.diagonal().array() += r;
  if (!is_positive_definite(out.matrix)) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(a, Eigen::EigenvaluesOnly);
    const double eigmin = es.eigenvalues()(0);
    const double bump = 1e-8 * std::max(std::abs(a.trace()), 1e-300) / static_cast<double>(d);
    out.regularization = std::max(r, -eigmin + bump);
    out.fallback = true;
    out.matrix = a;
    out.matrix.diagonal().array() += out.regularization;
    for (int it = 0; it < 60 && !is_positive_definite(out.matrix); ++it) {
      out.regularization += bump * std::pow(2.0, it);
      out.matrix = a;
      out.matrix.diagonal().array() += out.regularization;
    }
  }
  return out;
}

MatrixNorm parse_matrix_norm(std::string_view name) {
  if (name == "frobenius") return MatrixNorm::frobenius;
  if (name == "spectral") return MatrixNorm::spectral;
  if (name == "max" || name == "max-abs") return MatrixNorm::max_abs;
  throw_invalid("parse_matrix_norm", "unknown norm '" + std::string(name) + "'; use frobenius, spectral or max-abs");
}

std::string_view to_string(MatrixNorm norm) {
  switch (norm) {
    case MatrixNorm::frobenius:
      return "frobenius";
    case MatrixNorm::spectral:
      return "spectral";
    case MatrixNorm::max_abs:
      return "max-abs";
  }
  return "";
}

double matrix_norm(const Eigen::Ref<const Eigen::MatrixXd>& a, MatrixNorm norm) {
  switch (norm) {
    case MatrixNorm::frobenius:
      return a.norm();
    case MatrixNorm::spectral: {
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(0.5 * (a + a.transpose()), Eigen::EigenvaluesOnly);
      return es.eigenvalues().cwiseAbs().maxCoeff();
    }
    case MatrixNorm::max_abs:
      return a.cwiseAbs().maxCoeff();
  }
  return 0.0;
}

Histogram make_histogram(std::span<const double> values, int bins) {
  constexpr const char* fn = "make_histogram";
  if (bins < 1) throw_domain(fn, "bins", bins, ">= 1");
  if (values.empty()) throw_domain(fn, "number of values", 0.0, ">= 1");
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : values) {
    check_finite(fn, "value", v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  Histogram h;
  const double n = static_cast<double>(values.size());
  if (!(hi > lo)) {
    h.edges = {lo, hi};
    h.counts = {n};
    h.density = {0.0};
    h.degenerate = true;
    return h;
  }
  const double width = (hi - lo) / bins;
  h.edges.resize(static_cast<std::size_t>(bins) + 1);
  for (int k = 0; k <= bins; ++k) h.edges[static_cast<std::size_t>(k)] = lo + width * k;
  h.edges.back() = hi;
  h.counts.assign(static_cast<std::size_t>(bins), 0.0);
  for (double v : values) {
    auto k = static_cast<int>(std::floor((v - lo) / width));
    k = std::clamp(k, 0, bins - 1);
    h.counts[static_cast<std::size_t>(k)] += 1.0;
  }
  h.density.resize(h.counts.size());
  for (std::size_t k = 0; k < h.counts.size(); ++k) {
    h.density[k] = h.counts[k] / (n * (h.edges[k + 1] - h.edges[k]));
  }
  return h;
}

}  // namespace dpmu::core
