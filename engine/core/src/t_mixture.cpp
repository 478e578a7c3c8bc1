#include "dpmu/core/t_mixture.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

namespace {

using constants::kInf;

// Double-precision Boost (no promotion to long double: 5× faster, still ~1e-16 relative).
using DoublePolicy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;

}  // namespace

StudentT::StudentT(double nu) : nu_(nu) {
  if (!(std::isfinite(nu) && nu > 0.0)) throw_domain("StudentT", "degrees_of_freedom", nu, "finite and > 0");
  sqrt_nu_ = std::sqrt(nu);
  log_norm_ = std::lgamma(0.5 * (nu + 1.0)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * std::numbers::pi);
  series_ = nu == std::floor(nu) && nu <= kSeriesMaxDof;
  if (!series_) return;
  const int v = static_cast<int>(nu);
  odd_ = (v % 2) == 1;
  // A&S 26.7.3–4 with c = cos θ: ν even: P(|T| ≤ t) = sin θ Σ_{k=0}^{ν/2−1} b_k c^{2k},
  // b_0 = 1, b_k = b_{k−1} (2k−1)/(2k); ν odd: (2/π)(θ + sin θ cos θ Σ_{k=0}^{(ν−3)/2} d_k c^{2k}),
  // d_0 = 1, d_k = d_{k−1} (2k)/(2k+1).
  const int terms = odd_ ? (v - 1) / 2 : v / 2;  // ν = 1: none
  double c = 1.0;
  for (int k = 0; k < terms; ++k) {
    if (k > 0) c *= odd_ ? (2.0 * k) / (2.0 * k + 1.0) : (2.0 * k - 1.0) / (2.0 * k);
    coefficients_.push_back(c);
  }
  std::reverse(coefficients_.begin(), coefficients_.end());
}

double StudentT::centred_cdf(double z) const {
  if (std::isinf(z)) return z > 0 ? 1.0 : -1.0;
  if (!series_) {
    const boost::math::students_t_distribution<double, DoublePolicy> t(nu_);
    const double tail = boost::math::cdf(t, -std::fabs(z));
    return std::copysign(1.0 - 2.0 * tail, z);
  }
  const double r = 1.0 / (nu_ + z * z);
  const double c2 = nu_ * r;
  double sum = 0.0;
  for (const double b : coefficients_) sum = sum * c2 + b;
  if (!odd_) return z * std::sqrt(r) * sum;
  return std::numbers::inv_pi * 2.0 * (std::atan(z / sqrt_nu_) + z * sqrt_nu_ * r * sum);
}

double StudentT::pdf(double z) const { return std::exp(log_norm_ - 0.5 * (nu_ + 1.0) * std::log1p(z * z / nu_)); }

TMixture::TMixture(double point_mass, const std::vector<TComponent>& components, double tau) {
  constexpr const char* fn = "TMixture";
  if (!(point_mass >= 0.0 && std::isfinite(point_mass))) throw_domain(fn, "point_mass", point_mass, "finite and >= 0");
  if (!(tau >= 0.0 && tau < 1.0)) throw_domain(fn, "tau", tau, "in [0, 1)");
  std::vector<std::size_t> order;
  double total = point_mass;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const TComponent& c = components[i];
    if (!(c.weight > 0.0)) continue;
    if (!(std::isfinite(c.weight) && std::isfinite(c.location) && c.scale > 0.0 && std::isfinite(c.scale))) {
      throw_domain(fn, "component scale", c.scale, "finite and > 0, with finite weight and location");
    }
    order.push_back(i);
    total += c.weight;
  }
  if (!(total > 0.0)) return;  // nothing: every quantile is 0
  // Drop the lightest components while their total stays within τ of the whole mass (ties in
  // weight broken by index, so the result does not depend on the sort's stability).
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
    return components[i].weight < components[j].weight || (components[i].weight == components[j].weight && i < j);
  });
  double dropped = 0.0;
  std::size_t first = 0;
  while (first < order.size() && dropped + components[order[first]].weight <= tau * total) {
    dropped += components[order[first]].weight;
    ++first;
  }
  order.erase(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(first));
  std::sort(order.begin(), order.end());  // the kept components in their given order
  dropped_ = dropped / total;
  const double kept = total - dropped;
  point_mass_ = point_mass / kept;
  double m1 = 0.0;
  double m2 = 0.0;
  for (const std::size_t i : order) {
    const TComponent& c = components[i];
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const Group& gr) { return gr.t.degrees_of_freedom() == c.degrees_of_freedom; });
    if (g == groups_.end()) {
      groups_.push_back(Group{StudentT(c.degrees_of_freedom), {}, {}, {}});
      g = groups_.end() - 1;
    }
    const double w = c.weight / kept;
    g->weight.push_back(w);
    g->location.push_back(c.location);
    g->inv_scale.push_back(1.0 / c.scale);
    continuous_mass_ += w;
    const double nu = c.degrees_of_freedom;
    // For ν ≤ 2 the variance is infinite: the scale stands in (only the starting point uses it).
    const double var = c.scale * c.scale * (nu > 2.0 ? nu / (nu - 2.0) : 1.0);
    m1 += w * c.location;
    m2 += w * (c.location * c.location + var);
  }
  mean_ = m1;
  sd_ = std::sqrt(std::max(m2 - m1 * m1, 0.0));
  if (!(sd_ > 0.0)) sd_ = 1.0;
}

std::size_t TMixture::components() const {
  std::size_t k = 0;
  for (const Group& g : groups_) k += g.weight.size();
  return k;
}

namespace {

constexpr std::size_t kInterleave = 8;

}  // namespace

template <std::size_t U>
void TMixture::series_block(const StudentT& t, double x, const double* w, const double* loc, const double* inv,
                            double norm, double half_nu1, double& a_sum, double* f_sum) {
  const double nu = t.nu_;
  const double sqrt_nu = t.sqrt_nu_;
  const double* coef = t.coefficients_.data();
  const std::size_t terms = t.coefficients_.size();
  double z[U];
  double r[U];
  double c2[U];
  double sum[U];
  for (std::size_t u = 0; u < U; ++u) {
    z[u] = (x - loc[u]) * inv[u];
    r[u] = 1.0 / (nu + z[u] * z[u]);
    c2[u] = nu * r[u];
    sum[u] = 0.0;
  }
  for (std::size_t k = 0; k < terms; ++k) {
    for (std::size_t u = 0; u < U; ++u) sum[u] = sum[u] * c2[u] + coef[k];
  }
  for (std::size_t u = 0; u < U; ++u) {
    const double a = t.odd_ ? std::numbers::inv_pi * 2.0 * (std::atan(z[u] / sqrt_nu) + z[u] * sqrt_nu * r[u] * sum[u])
                            : z[u] * std::sqrt(r[u]) * sum[u];
    a_sum += w[u] * a;
    if (f_sum) *f_sum += w[u] * inv[u] * norm * std::pow(c2[u], half_nu1);
  }
}

void TMixture::continuous(double x, double& cdf, double* pdf) const {
  double a_sum = 0.0;
  double f_sum = 0.0;
  for (const Group& g : groups_) {
    const std::size_t m = g.weight.size();
    const double* w = g.weight.data();
    const double* loc = g.location.data();
    const double* inv = g.inv_scale.data();
    const StudentT& t = g.t;
    const double half_nu1 = 0.5 * (t.degrees_of_freedom() + 1.0);
    if (!t.series_) {
      for (std::size_t i = 0; i < m; ++i) {
        const double z = (x - loc[i]) * inv[i];
        a_sum += w[i] * t.centred_cdf(z);
        if (pdf) f_sum += w[i] * inv[i] * t.pdf(z);
      }
      continue;
    }
    const double norm = std::exp(t.log_norm_);
    // kInterleave components at a time: their Horner chains (about ν/2 terms each) are independent,
    // so the CPU overlaps them instead of waiting on one chain's latency. Each component's
    // arithmetic and the order of both sums are those of one component at a time (bit-identical).
    double* const f = pdf ? &f_sum : nullptr;
    std::size_t i = 0;
    for (; i + kInterleave <= m; i += kInterleave) {
      series_block<kInterleave>(t, x, w + i, loc + i, inv + i, norm, half_nu1, a_sum, f);
    }
    for (; i < m; ++i) series_block<1>(t, x, w + i, loc + i, inv + i, norm, half_nu1, a_sum, f);
  }
  cdf = 0.5 * (continuous_mass_ + a_sum);
  if (pdf) *pdf = f_sum;
}

double TMixture::cdf(double x) const {
  double c = 0.0;
  continuous(x, c, nullptr);
  return c + (x >= 0.0 ? point_mass_ : 0.0);
}

double TMixture::quantile(double q) const {
  check_open_interval("TMixture::quantile", "q", q, 0.0, 1.0);
  if (groups_.empty()) return 0.0;
  double lo = -kInf;  // C(lo) + offset < q
  double hi = kInf;   // C(hi) + offset > q
  double offset = 0.0;
  if (point_mass_ > 0.0) {
    if (below_zero_ < 0.0) {
      continuous(0.0, below_zero_, nullptr);  // F(0⁻), shared by the two ends of an interval
      ++evaluations_;
    }
    if (q >= below_zero_ && q <= below_zero_ + point_mass_) return 0.0;
    if (q < below_zero_) {
      hi = 0.0;
    } else {
      lo = 0.0;
      offset = point_mass_;
    }
  }
  // Start from the normal approximation of the whole mixture, inside the side of 0 found above.
  const double zq = boost::math::quantile(boost::math::normal_distribution<double, DoublePolicy>(), q);
  double x = mean_ + zq * sd_;
  if (!(x > lo)) x = lo + sd_;
  if (!(x < hi)) x = hi - sd_;
  constexpr double kRelTol = 0x1p-42;
  const double abs_tol = 1e-14 * sd_;
  double expand = sd_;   // outward steps while one end of the bracket is infinite
  double dx_old = kInf;  // the step before last (bisect when Newton stalls)
  double dx = kInf;
  for (int it = 0; it < 400; ++it) {
    double c = 0.0;
    double f = 0.0;
    continuous(x, c, &f);
    ++evaluations_;
    const double g = c + offset - q;
    if (g == 0.0) return x;
    (g < 0.0 ? lo : hi) = x;
    const bool bounded = std::isfinite(lo) && std::isfinite(hi);
    if (bounded && hi - lo <= kRelTol * std::max(std::fabs(lo), std::fabs(hi)) + abs_tol) return 0.5 * (lo + hi);
    const double step = -g / f;
    // Converged: the step is below the tolerance (it may not even move x by one ulp).
    if (std::fabs(step) <= kRelTol * std::fabs(x) + abs_tol) return std::clamp(x + step, lo, hi);
    double next = x + step;
    const bool newton = next > lo && next < hi && !(bounded && std::fabs(step) > 0.5 * std::fabs(dx_old));
    if (!newton && bounded) {
      next = 0.5 * (lo + hi);
    } else if (!newton) {
      next = std::isfinite(lo) ? lo + expand : hi - expand;
      expand *= 2.0;
    }
    dx_old = dx;
    dx = next - x;
    x = next;
  }
  return x;
}

}  // namespace dpmu::core
