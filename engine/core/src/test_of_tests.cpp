// The Test of Tests around the partial F-test (Kazan, Shi, Groce & Bray 2023; docs/methods.md
// "Test of Tests").
#include "dpmu/core/test_of_tests.hpp"

#include <algorithm>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/non_central_f.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/core/tulap.hpp"

namespace dpmu::core {

namespace {

/// Brent's (1973, "Algorithms for minimization without derivatives", Ch. 5) one-dimensional
/// minimiser on [a, b]: golden-section steps with parabolic interpolation, tolerance
/// tol/3 + √ε_mach |x| (the convention of R's optimize, which the authors' rule calls).
template <class F>
double brent_minimise(F&& f, double a, double b, double tol) {
  const double golden = 0.5 * (3.0 - std::sqrt(5.0));
  const double sqrt_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  double x = a + golden * (b - a), w = x, v = x;
  double fx = f(x), fw = fx, fv = fx;
  double d = 0.0, e = 0.0;
  for (int it = 0; it < 500; ++it) {
    const double mid = 0.5 * (a + b);
    const double tol1 = sqrt_eps * std::abs(x) + tol / 3.0;
    const double tol2 = 2.0 * tol1;
    if (std::abs(x - mid) <= tol2 - 0.5 * (b - a)) break;
    double p = 0.0, q = 0.0, r = 0.0;
    if (std::abs(e) > tol1) {  // trial parabola through x, w, v
      r = (x - w) * (fx - fv);
      q = (x - v) * (fx - fw);
      p = (x - v) * q - (x - w) * r;
      q = 2.0 * (q - r);
      if (q > 0.0) {
        p = -p;
      } else {
        q = -q;
      }
      r = e;
      e = d;
    }
    if (std::abs(p) >= std::abs(0.5 * q * r) || p <= q * (a - x) || p >= q * (b - x)) {
      e = (x < mid) ? b - x : a - x;  // golden section
      d = golden * e;
    } else {
      d = p / q;  // parabolic step
      const double u = x + d;
      if (u - a < tol2 || b - u < tol2) d = (x < mid) ? tol1 : -tol1;
    }
    const double u = std::abs(d) >= tol1 ? x + d : (d > 0.0 ? x + tol1 : x - tol1);
    const double fu = f(u);
    if (fu <= fx) {
      if (u < x) {
        b = x;
      } else {
        a = x;
      }
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) {
        a = u;
      } else {
        b = u;
      }
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  return x;
}

/// The index range where pmf ≥ 1e-18·max(pmf) (the rest carries less than 1e-18·size in total).
std::pair<std::size_t, std::size_t> significant_range(const std::vector<double>& pmf) {
  const double cut = 1e-18 * *std::max_element(pmf.begin(), pmf.end());
  std::size_t lo = 0, hi = pmf.size();
  while (lo + 1 < hi && pmf[lo] < cut) ++lo;
  while (hi > lo + 1 && pmf[hi - 1] < cut) --hi;
  return {lo, hi};
}

/// Law of the sum of Binomial(k1, t1) and Binomial(k2, t2) by convolution over the significant ranges
/// (O(width1 · width2), widths of order 20√(kθ(1−θ)), not O(k1 k2)).
std::vector<double> two_binomial_pmf(std::uint64_t k1, double t1, std::uint64_t k2, double t2) {
  const std::vector<double> a = binomial_pmf(k1, t1);
  const std::vector<double> b = binomial_pmf(k2, t2);
  const auto [alo, ahi] = significant_range(a);
  const auto [blo, bhi] = significant_range(b);
  std::vector<double> out(k1 + k2 + 1, 0.0);
  for (std::size_t i = alo; i < ahi; ++i) {
    for (std::size_t j = blo; j < bhi; ++j) out[i + j] += a[i] * b[j];
  }
  return out;
}

double usable_power(double power, double alpha0) {
  return (std::isfinite(power) && power > 0.0) ? std::min(power, 1.0) : alpha0;
}

}  // namespace

PartialFTest partial_f_test(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                            const Eigen::Ref<const Eigen::VectorXd>& response) {
  const NestedFit fit = fit_nested_models(common, tested, response);
  PartialFTest t;
  t.df1 = static_cast<double>(fit.p);
  t.df2 = static_cast<double>(fit.n) - static_cast<double>(fit.p0) - static_cast<double>(fit.p);
  t.r_squared = fit.r_squared;
  // F = (R²/q)/((1 − R²)/df2); the p-value from the beta law of R² under H0 (no cancellation).
  t.f = (fit.r_squared / t.df1) / (std::exp(fit.log_one_minus_r_squared) / t.df2);
  t.p_value = boost::math::ibeta(0.5 * t.df2, 0.5 * t.df1, std::exp(fit.log_one_minus_r_squared));
  return t;
}

double partial_f_test_power(double effect, std::size_t n, int p0, int q, double alpha) {
  const char* fn = "partial_f_test_power";
  if (q < 1) throw_domain(fn, "q", q, "at least 1");
  if (p0 < 0) throw_domain(fn, "p0", p0, "at least 0");
  if (n <= static_cast<std::size_t>(p0 + q)) throw_domain(fn, "n", static_cast<double>(n), "greater than p0 + q");
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  if (!(std::isfinite(effect) && effect >= 0.0)) throw_domain(fn, "effect", effect, "finite and >= 0");
  const double df1 = q, df2 = static_cast<double>(n) - p0 - q;
  const double critical = boost::math::quantile(boost::math::complement(boost::math::fisher_f(df1, df2), alpha));
  const double lambda = static_cast<double>(n) * effect * effect;
  if (lambda == 0.0) return alpha;
  return boost::math::cdf(boost::math::complement(boost::math::non_central_f(df1, df2, lambda), critical));
}

double test_of_tests_power(double effect, const PublicTestPower& public_power, double epsilon, std::size_t n,
                           std::size_t m, double alpha0, double alpha) {
  const char* fn = "test_of_tests_power";
  if (m < 1 || m > n) throw_domain(fn, "m", static_cast<double>(m), "in [1, n]");
  check_open_interval(fn, "alpha0", alpha0, 0.0, 1.0);
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  check_positive_finite(fn, "epsilon", epsilon);
  const std::size_t small = n / m, large_count = n % m;
  const double theta_large = large_count ? usable_power(public_power(effect, small + 1, alpha0), alpha0) : alpha0;
  const double theta_small = usable_power(public_power(effect, small, alpha0), alpha0);
  const std::vector<double> pmf = two_binomial_pmf(large_count, theta_large, m - large_count, theta_small);
  const double z = tulap_critical_value(m, alpha0, epsilon, alpha);
  return tulap_upper_probability(z, pmf, epsilon);
}

std::vector<std::size_t> test_of_tests_m_grid(std::size_t n, std::size_t min_rows) {
  std::vector<std::size_t> grid;
  const auto root = static_cast<std::size_t>(std::floor(std::sqrt(static_cast<double>(n))));
  for (std::size_t m = 1; m <= root; ++m) grid.push_back(m);
  const auto kmax = static_cast<std::size_t>(std::floor(std::sqrt(static_cast<double>(n)) + 1.0));
  for (std::size_t k = kmax; k >= 1; --k) grid.push_back(n / k);
  std::vector<std::size_t> out;
  for (std::size_t m : grid) {
    if (m < 1 || std::find(out.begin(), out.end(), m) != out.end()) continue;
    if (n / m < min_rows) continue;
    out.push_back(m);
  }
  return out;
}

TestOfTestsTuning optimal_m_alpha0(double effect, const PublicTestPower& public_power, double epsilon, std::size_t n,
                                   std::span<const std::size_t> m_grid, double alpha) {
  if (m_grid.empty())
    throw_invalid("optimal_m_alpha0", "the grid of m is empty (no m leaves enough rows per subsample)");
  TestOfTestsTuning best;
  best.power = -1.0;
  for (std::size_t m : m_grid) {
    const auto power = [&](double a0) { return test_of_tests_power(effect, public_power, epsilon, n, m, a0, alpha); };
    const double a0 = brent_minimise([&](double a) { return -power(a); }, 0.0, 1.0, 5e-3);
    const double pw = power(a0);
    if (pw > best.power) best = TestOfTestsTuning{pw, a0, m, effect};
  }
  return best;
}

TestOfTestsTuning practical_m_alpha0(double rho, const PublicTestPower& public_power, double epsilon, std::size_t n,
                                     std::span<const std::size_t> m_grid, std::span<const double> effect_grid,
                                     double alpha) {
  check_open_interval("practical_m_alpha0", "rho", rho, 0.0, 1.0);
  if (effect_grid.empty()) throw_invalid("practical_m_alpha0", "the grid of effect sizes is empty");
  // Binary search over [lo, hi) of the grid for the smallest effect whose optimal power reaches rho.
  std::size_t lo = 0, hi = effect_grid.size();
  std::optional<TestOfTestsTuning> found;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo - 1) / 2;  // the authors' (length + 1) %/% 2, 0-based
    const TestOfTestsTuning t = optimal_m_alpha0(effect_grid[mid], public_power, epsilon, n, m_grid, alpha);
    if (t.power >= rho) {
      found = t;
      hi = mid + 1;
    } else {
      lo = mid + 1;
    }
  }
  if (found && found->effect == effect_grid[lo]) return *found;
  return optimal_m_alpha0(effect_grid[lo], public_power, epsilon, n, m_grid, alpha);
}

TestOfTestsRelease::TestOfTestsRelease(TestOfTestsSettings s) : settings_(s) {
  const char* fn = "TestOfTestsRelease";
  epsilon_used_ = tulap_dyadic_epsilon(s.epsilon);
  check_open_interval(fn, "alpha0", s.alpha0, 0.0, 1.0);
  if (s.q < 1) throw_domain(fn, "q (tested columns)", s.q, "at least 1");
  if (s.p0 < 0) throw_domain(fn, "p0", s.p0, "at least 0");
  if (s.num_subsets < 1 || s.num_subsets > s.n) {
    throw_domain(fn, "the number of subsamples m", static_cast<double>(s.num_subsets), "in [1, n]");
  }
  const std::size_t rows = s.n / s.num_subsets;
  if (rows <= static_cast<std::size_t>(s.p0 + s.q)) {
    throw_domain(fn, "the number of subsamples m", static_cast<double>(s.num_subsets),
                 "at most n/(p0 + q + 1) = " + format_value(static_cast<double>(s.n / (s.p0 + s.q + 1))) +
                     ", so that every subsample has more rows than coefficients");
  }
}

PrivacyGuarantee TestOfTestsRelease::privacy() const {
  PrivacyGuarantee g;
  g.epsilon = settings_.epsilon;
  g.delta = 0.0;
  g.neighbouring = "replace one row (n public)";
  g.mechanism =
      "Tulap noise (b = exp(-epsilon)) on the count of subsample F-test p-values <= alpha0 (Kazan et al. 2023; "
      "Awan & Slavkovic 2018)";
  g.sensitivity_name = "l1_sensitivity";
  g.sensitivity = 1.0;
  g.sampler =
      "exact discrete Laplace (Canonne, Kamath & Steinke 2020, Alg. 2, dyadic epsilon) plus a 53-bit uniform, from "
      "the kernel CSPRNG";
  return g;
}

TestOfTestsOutput TestOfTestsRelease::release_p_values(std::span<const double> p_values, NoiseSource& noise) const {
  if (p_values.size() != settings_.num_subsets) {
    throw_invalid("TestOfTestsRelease::release_p_values", "expected one p-value per subsample (" +
                                                              std::to_string(settings_.num_subsets) + "), got " +
                                                              std::to_string(p_values.size()));
  }
  TestOfTestsDiagnostics diag;
  diag.subset_p_values.assign(p_values.begin(), p_values.end());
  // One uniform per subsample, drawn whether or not it is used: the replacement p-value of subsample i
  // does not depend on which other subsamples failed (the coupling of the sensitivity argument).
  std::vector<double> uniforms(p_values.size());
  for (double& u : uniforms) u = uniform_open01(noise);
  for (std::size_t i = 0; i < diag.subset_p_values.size(); ++i) {
    double& p = diag.subset_p_values[i];
    if (std::isnan(p)) {
      p = uniforms[i];
      ++diag.failed_subsets;
    }
    if (p <= settings_.alpha0) ++diag.count;
  }
  TestOfTestsOutput out;
  out.noisy_count = static_cast<double>(diag.count) + tulap_noise(noise, epsilon_used_);
  out.p_value = tulap_binomial_p_value(out.noisy_count, settings_.num_subsets, settings_.alpha0, epsilon_used_);
  if (!noise.is_secure()) out.diagnostics = std::move(diag);
  return out;
}

TestOfTestsOutput TestOfTestsRelease::release(const Eigen::Ref<const Eigen::MatrixXd>& common,
                                              const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                              const Eigen::Ref<const Eigen::VectorXd>& response,
                                              NoiseSource& noise) const {
  const char* fn = "TestOfTestsRelease::release";
  const auto n = static_cast<Eigen::Index>(settings_.n);
  if (response.size() != n || common.rows() != n || tested.rows() != n) {
    throw_invalid(
        fn, "the data have " + std::to_string(response.size()) + " rows, the settings " + std::to_string(settings_.n));
  }
  if (common.cols() != settings_.p0 || tested.cols() != settings_.q) {
    throw_invalid(fn, "the common and tested blocks do not have p0 and q columns");
  }
  // The partition is drawn from the release's own randomness, independently of the data.
  RngStream partition_rng(noise(), noise(), 0, StreamPurpose::data);
  const auto partition = random_partition(settings_.n, settings_.num_subsets, partition_rng);
  std::vector<double> p_values(settings_.num_subsets, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < partition.size(); ++i) {
    const auto& rows = partition[i];
    const auto b = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd c(b, common.cols()), t(b, tested.cols());
    Eigen::VectorXd y(b);
    for (Eigen::Index r = 0; r < b; ++r) {
      const auto k = static_cast<Eigen::Index>(rows[static_cast<std::size_t>(r)]);
      c.row(r) = common.row(k);
      t.row(r) = tested.row(k);
      y(r) = response(k);
    }
    try {
      p_values[i] = partial_f_test(c, t, y).p_value;
    } catch (const std::invalid_argument&) {
      // rank-deficient, constant or exactly fitted subsample, or a non-finite value: NaN (U(0, 1))
    } catch (const std::domain_error&) {
    }
  }
  return release_p_values(p_values, noise);
}

}  // namespace dpmu::core
