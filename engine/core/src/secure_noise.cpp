#include "dpmu/core/secure_noise.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

double discrete_gaussian_delta(std::uint64_t s, double epsilon, std::uint64_t sensitivity) {
  const double var = static_cast<double>(s);
  const double d = static_cast<double>(sensitivity);
  const auto half_width = static_cast<std::int64_t>(std::ceil(40.0 * std::sqrt(var))) + 2;
  // log pmf up to the normaliser; tail sums in log space
  std::vector<double> logw;
  logw.reserve(static_cast<std::size_t>(2 * half_width + 1));
  for (std::int64_t z = -half_width; z <= half_width; ++z) {
    logw.push_back(-static_cast<double>(z) * static_cast<double>(z) / (2.0 * var));
  }
  const double log_norm = log_sum_exp(logw);
  const auto log_tail = [&](double x) {  // log P[Z > x]
    const auto first = static_cast<std::int64_t>(std::floor(x)) + 1;
    const std::int64_t lo = std::max<std::int64_t>(first, -half_width);
    if (lo > half_width) return -INFINITY * 1.0;
    const auto begin = logw.begin() + (lo + half_width);
    std::vector<double> part(begin, logw.end());
    return log_sum_exp(part) - log_norm;
  };
  const double a = log_tail(epsilon * var / d - d / 2.0);
  const double b = epsilon + log_tail(epsilon * var / d + d / 2.0);
  if (b >= a) return 0.0;
  return std::exp(a) * (-std::expm1(b - a));
}

namespace {
using CalibrationKey = std::tuple<std::uint64_t, double, double, std::uint64_t>;  // s0, ε, δ, Δ_int
std::map<CalibrationKey, std::uint64_t>& calibrations() {
  static std::map<CalibrationKey, std::uint64_t> memo;
  return memo;
}
std::mutex& calibration_mutex() {
  static std::mutex m;
  return m;
}
std::size_t& calibration_count() {
  static std::size_t n = 0;
  return n;
}
}  // namespace

std::size_t discrete_gaussian_calibrations() {
  const std::lock_guard<std::mutex> lock(calibration_mutex());
  return calibration_count();
}

SecureNoiseSampler::SecureNoiseSampler(const ScalarMechanism& mechanism, std::size_t dimension, double value_bound) {
  if (!(std::isfinite(value_bound) && value_bound >= 0.0)) {
    throw_domain("SecureNoiseSampler", "value_bound", value_bound, "finite and >= 0");
  }
  const double min_grid =
      value_bound > 0.0 ? std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(value_bound))) - 50) : 0.0;
  if (dimension == 0) throw_invalid("SecureNoiseSampler", "dimension must be at least 1");
  if (dimension > 1 && mechanism.kind() != ScalarMechanism::Kind::laplace) {
    throw_invalid("SecureNoiseSampler", "only the Laplace mechanism can release a vector coordinate-wise here");
  }
  constexpr const char* fn = "SecureNoiseSampler";
  const double sensitivity = mechanism.sensitivity();
  switch (mechanism.kind()) {
    case ScalarMechanism::Kind::laplace: {
      const double grid =
          std::max(min_grid, std::ldexp(1.0, static_cast<int>(std::floor(std::log2(mechanism.scale()))) - 40));
      const double d_int = std::ceil(sensitivity / grid) + static_cast<double>(dimension);
      const double t = std::ceil(d_int / mechanism.epsilon());
      if (!(t < 0x1.0p62)) throw_domain(fn, "laplace scale in grid units", t, "< 2^62");
      laplace_ = true;
      grid_ = grid;
      integer_scale_ = static_cast<std::uint64_t>(t);
      return;
    }
    case ScalarMechanism::Kind::gaussian: {
      const double grid =
          std::max(min_grid, std::ldexp(1.0, static_cast<int>(std::floor(std::log2(mechanism.scale()))) - 10));
      const auto d_int = static_cast<std::uint64_t>(std::ceil(sensitivity / grid) + 1.0);
      const double sigma = std::max(mechanism.scale(), analytic_gaussian_sigma(mechanism.epsilon(), mechanism.delta(),
                                                                               static_cast<double>(d_int) * grid));
      auto s = static_cast<std::uint64_t>(std::ceil((sigma / grid) * (sigma / grid)));
      // The search below sums the discrete Gaussian's pmf over ~80 σ/g points per step (~15 ms): its
      // result, a deterministic function of (s0, ε, δ, Δ_int), is memoised for the process, so a
      // release or an audit of thousands of identical releases calibrates once. Same numbers.
      const CalibrationKey key{s, mechanism.epsilon(), mechanism.delta(), d_int};
      {
        const std::lock_guard<std::mutex> lock(calibration_mutex());
        if (const auto it = calibrations().find(key); it != calibrations().end()) {
          laplace_ = false;
          grid_ = grid;
          integer_scale_ = it->second;
          return;
        }
      }
      for (int i = 0; i < 200 && discrete_gaussian_delta(s, mechanism.epsilon(), d_int) > mechanism.delta(); ++i) {
        s = static_cast<std::uint64_t>(std::ceil(static_cast<double>(s) * 1.01));
      }
      if (discrete_gaussian_delta(s, mechanism.epsilon(), d_int) > mechanism.delta()) {
        throw std::domain_error("SecureNoiseSampler: could not calibrate the discrete Gaussian");
      }
      {
        const std::lock_guard<std::mutex> lock(calibration_mutex());
        calibrations().emplace(key, s);
        ++calibration_count();
      }
      laplace_ = false;
      grid_ = grid;
      integer_scale_ = s;
      return;
    }
  }
}

double SecureNoiseSampler::noise_scale() const {
  const auto s = static_cast<double>(integer_scale_);
  return laplace_ ? s * grid_ : std::sqrt(s) * grid_;
}

}  // namespace dpmu::core
