// The exact Gram kernel of [1 X] for 32-bit uniforms (core::UniformGramAccumulator): every
// instruction-set path against an independent 128-bit row-by-row reference, identical bits of the
// centred Gram matrix across paths and block orders, the worst-case magnitudes of the exactness
// budget, and the centred matrix against a long-double computation from the doubles of
// core::words_to_uniform32.
#include "dpmu/core/uniform_gram.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/cpu_features.hpp"

namespace core = dpmu::core;

namespace {

std::vector<core::UniformGramPath> available_paths() {
  std::vector<core::UniformGramPath> out;
  for (auto p : {core::UniformGramPath::generic, core::UniformGramPath::avx2, core::UniformGramPath::avx512,
                 core::UniformGramPath::avx512ifma}) {
    if (core::uniform_gram_path_available(p)) out.push_back(p);
  }
  return out;
}

// Blocks of words for n rows, p columns: blocks[b][j·128 + r].
std::vector<std::vector<std::uint64_t>> make_blocks(int p, std::uint64_t n, std::uint64_t key) {
  core::Xoshiro256ppX4 gen(key, 7);
  std::vector<std::vector<std::uint64_t>> blocks;
  for (std::uint64_t done = 0; done < n; done += 256) {
    std::vector<std::uint64_t> w(static_cast<std::size_t>(p) * 128);
    gen.fill_words(w);
    blocks.push_back(std::move(w));
  }
  return blocks;
}

// The k of row r of a block (layout of UniformGramAccumulator).
std::uint32_t block_value(const std::vector<std::uint64_t>& w, int j, int r) {
  const std::uint64_t x = w[static_cast<std::size_t>(j * 128 + (r < 128 ? r : r - 128))];
  return static_cast<std::uint32_t>(r < 128 ? x >> 32 : x & 0xffffffffULL);
}

core::UniformGramAccumulator accumulate(const std::vector<std::vector<std::uint64_t>>& blocks, int p, std::uint64_t n,
                                        core::UniformGramPath path) {
  core::UniformGramAccumulator acc(p, path);
  std::uint64_t done = 0;
  for (const auto& w : blocks) {
    const int m = static_cast<int>(std::min<std::uint64_t>(256, n - done));
    acc.add_block(w.data(), m);
    done += static_cast<std::uint64_t>(m);
  }
  return acc;
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("UniformGramAccumulator: every path equals the 128-bit row-by-row reference", "[uniform_gram]") {
  for (int p : {1, 2, 3, 5, 9, 13}) {
    for (std::uint64_t n : {std::uint64_t{2}, std::uint64_t{255}, std::uint64_t{256}, std::uint64_t{3 * 256 + 77}}) {
      const auto blocks = make_blocks(p, n, 100 + static_cast<std::uint64_t>(p));
      std::vector<std::uint32_t> k;
      for (std::uint64_t i = 0; i < n; ++i) {
        for (int j = 0; j < p; ++j) k.push_back(block_value(blocks[i / 256], j, static_cast<int>(i % 256)));
      }
      const auto ref = core::uniform_gram_reference(k, p);
      const int d = p + 1;
      for (auto path : available_paths()) {
        INFO("p = " << p << ", n = " << n << ", path " << core::to_string(path));
        const auto acc = accumulate(blocks, p, n, path);
        REQUIRE(acc.rows() == n);
        for (int a = 0; a < p; ++a) {
          REQUIRE(acc.sum(a) == ref[static_cast<std::size_t>(a + 1)]);
          for (int b = 0; b < p; ++b)
            REQUIRE(acc.cross_sum(a, b) == ref[static_cast<std::size_t>((a + 1) * d + b + 1)]);
        }
      }
    }
  }
}

TEST_CASE("UniformGramAccumulator: identical bits across paths and block orders", "[uniform_gram]") {
  const int p = 9;
  const std::uint64_t n = 40 * 256;
  auto blocks = make_blocks(p, n, 5);
  const auto reference = accumulate(blocks, p, n, core::UniformGramPath::generic).centred_gram(-2.0, 2.0);
  for (auto path : available_paths()) {
    CHECK(same_bits(accumulate(blocks, p, n, path).centred_gram(-2.0, 2.0), reference));
  }
  std::mt19937_64 shuffle(3);
  std::shuffle(blocks.begin(), blocks.end(), shuffle);
  CHECK(same_bits(accumulate(blocks, p, n, core::UniformGramPath::automatic).centred_gram(-2.0, 2.0), reference));
  INFO("paths tested on this CPU: " << available_paths().size());
  CHECK(available_paths().size() >= 1);
}

TEST_CASE("UniformGramAccumulator: worst-case magnitudes stay exact past the int64 folds", "[uniform_gram]") {
  // All k = 2^32 − 1, or alternating 0 and 2^32 − 1 by block: the largest products of the
  // exactness budget, over 2 100 blocks (more than one fold of the int64 lanes at 2 048 halves).
  const int p = 3;
  const std::uint64_t blocks = 2100;
  const std::uint64_t n = blocks * 256;
  for (auto path : available_paths()) {
    core::UniformGramAccumulator all_max(p, path), alternating(p, path);
    const std::vector<std::uint64_t> ones(p * 128, ~std::uint64_t{0}), zeros(p * 128, 0);
    for (std::uint64_t b = 0; b < blocks; ++b) {
      all_max.add_block(ones.data(), 256);
      alternating.add_block(b % 2 ? ones.data() : zeros.data(), 256);
    }
    const core::int128_t kmax = 0xffffffffLL;
    const core::int128_t nn = static_cast<core::int128_t>(n);
    for (int a = 0; a < p; ++a) {
      CHECK(all_max.sum(a) == nn * kmax);
      CHECK(alternating.sum(a) == nn / 2 * kmax);
      for (int b = 0; b <= a; ++b) {
        CHECK(all_max.cross_sum(a, b) == nn * kmax * kmax);
        CHECK(alternating.cross_sum(a, b) == nn / 2 * kmax * kmax);
      }
    }
    const Eigen::MatrixXd g = all_max.centred_gram(-2.0, 2.0);
    CHECK(g.cwiseAbs().maxCoeff() == 0.0);  // constant columns: exactly zero after exact centring
  }
}

TEST_CASE("UniformGramAccumulator: every path equals the generic one on extreme words, every column count",
          "[uniform_gram]") {
  // Words mixing the extreme halves 0, 2^31, 2^32 − 1 with random ones (the avx512ifma path's
  // Winograd factors hi_a + lo_b reach 2^33 − 2 and their products 2^66; the FP paths' splits hit
  // their ties), p = 1 … 8 (every remainder of its groups of three columns), reads between blocks.
  std::mt19937_64 rng(17);
  const std::uint64_t halves[] = {0, 0x80000000ULL, 0xffffffffULL, 0x00008000ULL, 0x7fff8000ULL};
  for (int p = 1; p <= 8; ++p) {
    std::vector<std::vector<std::uint64_t>> blocks(40, std::vector<std::uint64_t>(static_cast<std::size_t>(p) * 128));
    for (auto& w : blocks) {
      for (auto& x : w) {
        const std::uint64_t r = rng();
        const std::uint64_t hi = r % 3 == 0 ? (rng() >> 32) : halves[r % 5];
        const std::uint64_t lo = r % 7 == 0 ? (rng() >> 32) : halves[(r >> 8) % 5];
        x = hi << 32 | lo;
      }
    }
    core::UniformGramAccumulator reference(p, core::UniformGramPath::generic);
    for (const auto& w : blocks) reference.add_block(w.data(), 256);
    for (auto path : available_paths()) {
      INFO("p = " << p << ", path " << core::to_string(path));
      core::UniformGramAccumulator acc(p, path);
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        acc.add_block(blocks[b].data(), 256);
        if (b == 7) CHECK(acc.sum(p - 1) != 0);  // a read in between changes nothing
      }
      for (int a = 0; a < p; ++a) {
        CHECK(acc.sum(a) == reference.sum(a));
        for (int b = 0; b <= a; ++b) CHECK(acc.cross_sum(a, b) == reference.cross_sum(a, b));
      }
      CHECK(same_bits(acc.centred_gram(-2.0, 2.0), reference.centred_gram(-2.0, 2.0)));
    }
  }
}

TEST_CASE("UniformGramAccumulator: centred Gram and means match a long-double computation", "[uniform_gram]") {
  const int p = 4;
  const std::uint64_t n = 10 * 256 + 13;
  const auto blocks = make_blocks(p, n, 11);
  const auto acc = accumulate(blocks, p, n, core::UniformGramPath::automatic);
  // x from words_to_uniform32 on (−3, 5) (hi half → rows 0..127, lo half → rows 128..255)
  std::vector<std::vector<long double>> x(static_cast<std::size_t>(p));
  for (std::uint64_t i = 0; i < n; ++i) {
    for (int j = 0; j < p; ++j) {
      const std::uint32_t k = block_value(blocks[i / 256], j, static_cast<int>(i % 256));
      const std::uint64_t word = static_cast<std::uint64_t>(k) << 32;
      double u[2];
      core::words_to_uniform32(std::span<const std::uint64_t>(&word, 1), -3.0, 5.0, u);
      x[static_cast<std::size_t>(j)].push_back(u[0]);
    }
  }
  const Eigen::MatrixXd g = acc.centred_gram(-3.0, 5.0);
  const Eigen::VectorXd m = acc.means(-3.0, 5.0);
  for (int a = 0; a < p; ++a) {
    long double ma = 0;
    for (auto v : x[static_cast<std::size_t>(a)]) ma += v;
    ma /= static_cast<long double>(n);
    CHECK(m(a) == Approx(static_cast<double>(ma)).epsilon(1e-14));
    for (int b = 0; b <= a; ++b) {
      long double mb = 0;
      for (auto v : x[static_cast<std::size_t>(b)]) mb += v;
      mb /= static_cast<long double>(n);
      long double s = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        s += (x[static_cast<std::size_t>(a)][i] - ma) * (x[static_cast<std::size_t>(b)][i] - mb);
      }
      // words_to_uniform32 rounds x on (−3, 5) to double (relative 2^-53 per value)
      CHECK(g(a, b) == Approx(static_cast<double>(s)).margin(1e-9 * static_cast<double>(n)));
      CHECK(g(b, a) == g(a, b));
    }
  }
}

TEST_CASE("UniformGramAccumulator: bad input", "[uniform_gram]") {
  CHECK_THROWS_WITH(core::UniformGramAccumulator(0), Catch::Contains("columns"));
  core::UniformGramAccumulator acc(2);
  const std::vector<std::uint64_t> w(256, 1);
  CHECK_THROWS_WITH(acc.add_block(w.data(), 257), Catch::Contains("rows"));
  acc.add_block(w.data(), 1);
  CHECK_THROWS_WITH(acc.centred_gram(-2.0, 2.0), Catch::Contains("rows"));
  acc.add_block(w.data(), 1);
  CHECK_THROWS(acc.centred_gram(2.0, -2.0));
}

TEST_CASE("UniformGramAccumulator::add_block_rows: a block added in pieces equals the whole block", "[uniform_gram]") {
  const int p = 5;
  const auto blocks = make_blocks(p, 3 * 256, 31);
  for (const auto path : available_paths()) {
    const auto whole = accumulate(blocks, p, 3 * 256, path);
    // the middle block cut in the first half of its words (row 100) and in the second (row 200)
    core::UniformGramAccumulator pieces(p, path);
    pieces.add_block(blocks[0].data(), 256);
    pieces.add_block_rows(blocks[1].data(), 0, 100);
    pieces.add_block_rows(blocks[1].data(), 100, 200);
    pieces.add_block_rows(blocks[1].data(), 200, 256);
    pieces.add_block_rows(blocks[2].data(), 0, 0);  // empty: adds nothing
    pieces.add_block(blocks[2].data(), 256);
    INFO(core::to_string(path));
    CHECK(pieces.rows() == whole.rows());
    CHECK(same_bits(pieces.centred_gram(-2.0, 2.0), whole.centred_gram(-2.0, 2.0)));
    for (int j = 0; j < p; ++j) CHECK(pieces.sum(j) == whole.sum(j));
  }
  core::UniformGramAccumulator acc(p);
  CHECK_THROWS_WITH(acc.add_block_rows(blocks[0].data(), 10, 5), Catch::Contains("rows [10, 5)"));
  CHECK_THROWS_WITH(acc.add_block_rows(blocks[0].data(), -1, 5), Catch::Contains("within [0, 256]"));
  CHECK_THROWS_WITH(acc.add_block_rows(blocks[0].data(), 0, 257), Catch::Contains("within [0, 256]"));
}

TEST_CASE("DPMU_SIMD values cap the dispatched instruction sets", "[uniform_gram][simd]") {
  bool valid = false;
  CHECK(core::parse_simd_cap(nullptr, valid) == core::SimdCap::native);
  CHECK(valid);
  CHECK(core::parse_simd_cap("", valid) == core::SimdCap::native);
  CHECK(core::parse_simd_cap("native", valid) == core::SimdCap::native);
  CHECK(core::parse_simd_cap("avx512", valid) == core::SimdCap::native);
  CHECK(core::parse_simd_cap("avx2", valid) == core::SimdCap::avx2);
  CHECK(valid);
  CHECK(core::parse_simd_cap("generic", valid) == core::SimdCap::generic);
  CHECK(valid);
  CHECK(core::parse_simd_cap("AVX2", valid) == core::SimdCap::native);
  CHECK_FALSE(valid);
  // the cap of this process is consistent with what the kernels report as available
  if (core::simd_cap() < core::SimdCap::native) {
    CHECK_FALSE(core::cpu_has_avx512f());
    CHECK_FALSE(core::cpu_has_avx512ifma());
    CHECK_FALSE(core::uniform_gram_path_available(core::UniformGramPath::avx512ifma));
  }
  if (core::simd_cap() < core::SimdCap::avx2) {
    CHECK_FALSE(core::cpu_has_avx2());
    CHECK_FALSE(core::uniform_gram_path_available(core::UniformGramPath::avx2));
  }
}
