// The simulation hot-loop pieces: four-lane xoshiro256++ (against a scalar reference written
// from Blackman & Vigna's published algorithm, and SSE2 vs AVX2), the 32-bit uniform conversion
// (against the direct formula), uniformity by chi-square, and the blocked Gram kernel (against
// B'B, SSE2 vs AVX2 bit-identical).
#include "dpmu/core/block_random.hpp"

#include <Random123/philox.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/gram_matrix.hpp"

namespace core = dpmu::core;

namespace {

// Scalar xoshiro256++ exactly as in the reference C code (prng.di.unimi.it/xoshiro256plusplus.c).
struct ReferenceXoshiro {
  std::uint64_t s[4];
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

}  // namespace

TEST_CASE("reference xoshiro256++: known first outputs", "[block_random]") {
  // From state {1, 2, 3, 4}: first output rotl(1 + 4, 23) + 1 = 5·2^23 + 1 (hand computed), and
  // the second from the updated state {7, 0, 262146, 211106232532992} (hand computed).
  ReferenceXoshiro r{{1, 2, 3, 4}};
  CHECK(r.next() == 41943041ULL);
  CHECK(r.s[0] == 7);
  CHECK(r.s[1] == 0);
  CHECK(r.s[2] == 262146);
  CHECK(r.s[3] == 211106232532992ULL);
  CHECK(r.next() == ReferenceXoshiro::rotl(7 + 211106232532992ULL, 23) + 7);
}

TEST_CASE("Xoshiro256ppX4: lane l is xoshiro256++ seeded from Philox block l, interleaved", "[block_random]") {
  const std::uint64_t key0 = 20240521, key1 = 99;
  ReferenceXoshiro lane[4];
  r123::Philox4x64 philox;
  for (std::uint64_t l = 0; l < 4; ++l) {
    const auto r = philox(r123::Philox4x64::ctr_type{{l, 0, 0, 0}}, r123::Philox4x64::key_type{{key0, key1}});
    for (int i = 0; i < 4; ++i) lane[l].s[i] = r.v[i];
  }
  core::Xoshiro256ppX4 gen(key0, key1);
  std::vector<std::uint64_t> w(1000);
  gen.fill_words(w);
  for (std::size_t k = 0; k < w.size(); ++k) REQUIRE(w[k] == lane[k % 4].next());
  // operator() continues the same sequence (buffer of 64 words)
  for (int k = 0; k < 300; ++k) REQUIRE(gen() == lane[k % 4].next());
  CHECK_THROWS_WITH(gen.fill_words(std::span<std::uint64_t>(w.data(), 6)), Catch::Contains("multiple of 4"));
}

TEST_CASE("Xoshiro256ppX4: the SSE2 and AVX2 paths give the same words", "[block_random]") {
  core::Xoshiro256ppX4 a(1, 2), b(1, 2);
  std::vector<std::uint64_t> wa(4096), wb(4096);
  a.fill_words(wa, true);
  b.fill_words(wb, false);
  CHECK(wa == wb);
  a.fill_words(wa, false);
  b.fill_words(wb, true);
  CHECK(wa == wb);
}

TEST_CASE("words_to_uniform32 equals (k + 1/2) 2^-32 scaled, strictly inside the bounds", "[block_random]") {
  core::Xoshiro256ppX4 gen(3, 4);
  std::vector<std::uint64_t> w(4096);
  gen.fill_words(w);
  w[0] = 0;
  w[1] = ~0ULL;
  std::vector<double> u(2 * w.size());
  core::words_to_uniform32(w, -2.0, 2.0, u);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double hi = -2.0 + 4.0 * ((static_cast<double>(w[i] >> 32) + 0.5) * 0x1.0p-32);
    const double lo = -2.0 + 4.0 * ((static_cast<double>(w[i] & 0xffffffffULL) + 0.5) * 0x1.0p-32);
    REQUIRE(u[2 * i] == hi);
    REQUIRE(u[2 * i + 1] == lo);
  }
  std::vector<double> generic(u.size());
  core::words_to_uniform32(w, -2.0, 2.0, generic, false);  // the SSE2 path gives the same values
  CHECK(generic == u);
  CHECK_THROWS_WITH(core::words_to_uniform32(w, -2.0, 2.0, std::span<double>(u.data(), 10)),
                    Catch::Contains("2 * words.size()"));
  CHECK(u[0] == -2.0 + 4.0 * 0x1.0p-33);
  CHECK(u[2] < 2.0);
  CHECK(u[2] == -2.0 + 4.0 * ((4294967295.0 + 0.5) * 0x1.0p-32));
}

TEST_CASE("Xoshiro256ppX4 uniforms pass a chi-square test, also on pairs", "[block_random][statistical]") {
  // N = 10^6 uniforms on (-2, 2): 502 equal bins; and 10^6 / 2 consecutive pairs (u_2i, u_2i+1)
  // on a 22 × 22 grid (lag-1 independence across the hi/lo halves and across lanes).
  // Each statistic below its 1 - 1e-6 chi-square quantile (false failure 1e-6 each).
  const int N = 1000000;
  core::Xoshiro256ppX4 gen(20240521, 7);
  std::vector<std::uint64_t> w(N / 2);
  gen.fill_words(w);
  std::vector<double> u(N);
  core::words_to_uniform32(w, -2.0, 2.0, u);
  const auto chi = [](const std::vector<double>& count, double expect) {
    double c = 0;
    for (double x : count) c += (x - expect) * (x - expect) / expect;
    return c;
  };
  const auto crit = [](int df) {
    return boost::math::quantile(boost::math::complement(boost::math::chi_squared(df), 1e-6));
  };
  std::vector<double> count(502, 0.0);
  for (double x : u) {
    REQUIRE(x > -2.0);
    REQUIRE(x < 2.0);
    count[static_cast<std::size_t>(std::min(501, static_cast<int>((x + 2.0) / 4.0 * 502)))] += 1;
  }
  CHECK(chi(count, N / 502.0) < crit(501));
  std::vector<double> pairs(22 * 22, 0.0);
  for (int i = 0; i + 1 < N; i += 2) {
    const int a = std::min(21, static_cast<int>((u[i] + 2.0) / 4.0 * 22));
    const int b = std::min(21, static_cast<int>((u[i + 1] + 2.0) / 4.0 * 22));
    pairs[static_cast<std::size_t>(a * 22 + b)] += 1;
  }
  CHECK(chi(pairs, (N / 2) / 484.0) < crit(483));
}

TEST_CASE("accumulate_block_gram adds B'B (lower) and column sums, SSE2 and AVX2 bit-identical", "[block_random]") {
  for (int columns : {1, 2, 3, 7, 10, 11}) {
    for (int rows : {0, 4, 128, 256}) {
      const int stride = 260;
      Eigen::MatrixXd store = Eigen::MatrixXd::Random(stride, columns);
      const Eigen::MatrixXd b = store.topRows(rows);
      // the gram lives inside a larger matrix (outer stride != columns)
      Eigen::MatrixXd big = Eigen::MatrixXd::Constant(columns + 3, columns + 2, 0.25);
      Eigen::VectorXd sums = Eigen::VectorXd::Constant(columns, 1.5);
      core::accumulate_block_gram(store.data(), stride, columns, rows, big.block(1, 1, columns, columns), sums);
      const Eigen::MatrixXd expect = b.transpose() * b;
      for (int i = 0; i < columns; ++i) {
        for (int j = 0; j < columns; ++j) {
          const double got = big(1 + i, 1 + j);
          if (i >= j) {
            REQUIRE(got - 0.25 == Approx(expect(i, j)).epsilon(1e-13).margin(1e-13));
          } else {
            REQUIRE(got == 0.25);  // upper triangle untouched
          }
        }
        REQUIRE(sums(i) - 1.5 == Approx(b.col(i).sum()).epsilon(1e-13).margin(1e-13));
      }
      CHECK(big.row(0).isConstant(0.25));
      CHECK(big.col(0).isConstant(0.25));
      // SSE2 path equals the default (AVX2 where available) to the bit
      Eigen::MatrixXd g1 = Eigen::MatrixXd::Zero(columns, columns), g2 = g1;
      Eigen::VectorXd s1 = Eigen::VectorXd::Zero(columns), s2 = s1;
      core::accumulate_block_gram(store.data(), stride, columns, rows, g1, s1, true);
      core::accumulate_block_gram(store.data(), stride, columns, rows, g2, s2, false);
      CHECK(g1 == g2);
      CHECK(s1 == s2);
    }
  }
}

TEST_CASE("Xoshiro256ppX4: stream s seeds lane l from Philox counter {l, s, 0, 0}", "[block_random]") {
  const std::uint64_t key0 = 5, key1 = 6, stream = 3;
  ReferenceXoshiro lane[4];
  r123::Philox4x64 philox;
  for (std::uint64_t l = 0; l < 4; ++l) {
    const auto r = philox(r123::Philox4x64::ctr_type{{l, stream, 0, 0}}, r123::Philox4x64::key_type{{key0, key1}});
    for (int i = 0; i < 4; ++i) lane[l].s[i] = r.v[i];
  }
  core::Xoshiro256ppX4 gen(key0, key1, stream), base(key0, key1);
  std::vector<std::uint64_t> w(400), b(400);
  gen.fill_words(w);
  base.fill_words(b);
  for (std::size_t k = 0; k < w.size(); ++k) REQUIRE(w[k] == lane[k % 4].next());
  CHECK(w != b);
}
