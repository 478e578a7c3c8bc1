#pragma once
/// @file random.hpp
/// Counter-based random streams and the samplers built on them (docs/architecture.md §3.3).
///
/// A stream is a pure function of (master_seed, stream_key, replicate, purpose): Random123's
/// Philox4x64-10 (Salmon, Moraes, Dror & Shaw 2011, "Parallel random numbers: as easy as
/// 1, 2, 3", SC'11) keyed by {master_seed, stream_key}, with counter
/// {replicate, purpose, 0, block}. Numbers therefore do not depend on threads, task order
/// or sharding. Samplers are written here (not std::*_distribution, whose algorithms are
/// implementation-defined) and take the generator explicitly.

#include <Random123/philox.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace dpmu::core {

__extension__ typedef unsigned __int128 uint128_t;

/// Purpose of a stream: independent streams for data, mechanism noise and calibration.
enum class StreamPurpose : std::uint64_t { data = 0, noise = 1, calibration = 2 };

/// 64-bit FNV-1a hash of a string (stream keys from canonical cell descriptions).
constexpr std::uint64_t fnv1a_64(std::string_view s) {
  std::uint64_t h = 14695981039346656037ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

/// Philox4x64-10 stream; models UniformRandomBitGenerator (64-bit outputs).
/// Each stream has 2^64 blocks of four outputs. Deterministic given its four identifiers.
class RngStream {
 public:
  using result_type = std::uint64_t;

  RngStream(std::uint64_t master_seed, std::uint64_t stream_key, std::uint64_t replicate, StreamPurpose purpose)
      : key_{{master_seed, stream_key}}, ctr_{{replicate, static_cast<std::uint64_t>(purpose), 0, 0}} {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    if (index_ == 4) {
      out_ = philox_(ctr_, key_);
      ctr_.v[3] += 1;
      index_ = 0;
    }
    return out_.v[index_++];
  }

 private:
  using Philox = r123::Philox4x64;
  Philox philox_;
  Philox::key_type key_;
  Philox::ctr_type ctr_;
  Philox::ctr_type out_{};
  unsigned index_ = 4;
};

/// Uniform on the open interval (0, 1) with 53 random bits: ((x >> 11) + 1/2) 2^-53.
template <class Rng>
double uniform_open01(Rng& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

/// Standard normal by inversion of the CDF (Boost.Math erfc_inv through the quantile
/// -√2 erfc⁻¹(2u)); one 64-bit draw per variate, so the stream position is predictable.
template <class Rng>
double standard_normal(Rng& rng);

/// Standard normal by Boost.Random's ziggurat (boost::random::normal_distribution: 128 layers,
/// exact tail by Marsaglia's exponential rejection; McFarland 2016 layout, Boost ≥ 1.56). About
/// one 64-bit draw per variate (1.0 on average + rare rejections), so the stream position is
/// not fixed per variate; use it where speed matters (simulated data), standard_normal where a
/// predictable position is wanted. Deterministic for a given Boost version (Debian 12: 1.74).
template <class Rng>
double standard_normal_ziggurat(Rng& rng);

/// Laplace(0, scale) by inversion: u ~ U(-1/2, 1/2), x = -scale·sign(u)·log(1 - 2|u|)
/// (docs/methods.md §3.2). scale > 0 (unchecked).
template <class Rng>
double laplace(Rng& rng, double scale) {
  const double u = uniform_open01(rng) - 0.5;
  const double a = std::abs(u);
  const double mag = -scale * std::log1p(-2.0 * a);
  return u < 0 ? -mag : mag;
}

/// Gamma(shape, 1) by Marsaglia & Tsang (2000, ACM TOMS 26:363); shape > 0 (unchecked);
/// shape < 1 via the boost G(a) = G(a+1) U^{1/a}.
template <class Rng>
double standard_gamma(Rng& rng, double shape) {
  if (shape < 1.0) {
    const double u = uniform_open01(rng);
    return standard_gamma(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = standard_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open01(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

/// Chi-square with k > 0 degrees of freedom (2·Gamma(k/2)).
template <class Rng>
double chi_square(Rng& rng, double k) {
  return 2.0 * standard_gamma(rng, 0.5 * k);
}

/// Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b); a, b > 0 (unchecked).
template <class Rng>
double beta(Rng& rng, double a, double b) {
  const double x = standard_gamma(rng, a);
  const double y = standard_gamma(rng, b);
  return x / (x + y);
}

/// Uniform integer in [0, n) without modulo bias (Lemire 2019, "Fast random integer
/// generation in an interval", ACM TOMACS 29:3). n ≥ 1 (unchecked).
template <class Rng>
std::uint64_t uniform_index(Rng& rng, std::uint64_t n) {
  uint128_t m = static_cast<uint128_t>(rng()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<uint128_t>(rng()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

}  // namespace dpmu::core

#include <boost/math/special_functions/erf.hpp>
#include <boost/random/normal_distribution.hpp>

namespace dpmu::core {
template <class Rng>
double standard_normal(Rng& rng) {
  const double u = uniform_open01(rng);
  return -1.4142135623730951 * boost::math::erfc_inv(2.0 * u);
}
template <class Rng>
double standard_normal_ziggurat(Rng& rng) {
  boost::random::normal_distribution<double> normal;  // stateless for (0, 1): no cached variate
  return normal(rng);
}
}  // namespace dpmu::core
