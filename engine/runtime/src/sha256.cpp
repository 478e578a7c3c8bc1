// SHA-256 (FIPS 180-4 §6.2) and HMAC-SHA256 (RFC 2104).
#include "dpmu/runtime/sha256.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace dpmu::runtime {

namespace {

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4 §4.2.2).
constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256() : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const unsigned char* p) {
  std::array<std::uint32_t, 64> w{};
  for (int t = 0; t < 16; ++t) {
    w[t] = (std::uint32_t{p[4 * t]} << 24) | (std::uint32_t{p[4 * t + 1]} << 16) | (std::uint32_t{p[4 * t + 2]} << 8) |
           std::uint32_t{p[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  length_ += n;
  if (buffered_ > 0) {
    const std::size_t take = std::min(n, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    n -= take;
    if (buffered_ < buffer_.size()) return;
    block(buffer_.data());
    buffered_ = 0;
  }
  for (; n >= 64; p += 64, n -= 64) block(p);
  std::memcpy(buffer_.data(), p, n);
  buffered_ = n;
}

std::array<unsigned char, 32> Sha256::finish() {
  const std::uint64_t bits = length_ * 8;
  const unsigned char one = 0x80;
  update(std::string_view(reinterpret_cast<const char*>(&one), 1));
  const unsigned char zero = 0;
  while (buffered_ != 56) update(std::string_view(reinterpret_cast<const char*>(&zero), 1));
  std::array<unsigned char, 8> len{};
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  update(std::string_view(reinterpret_cast<const char*>(len.data()), len.size()));
  std::array<unsigned char, 32> out{};
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 4; ++k) out[4 * i + k] = static_cast<unsigned char>(h_[i] >> (24 - 8 * k));
  }
  return out;
}

std::string to_hex(const unsigned char* data, std::size_t size) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    out += hex[data[i] >> 4];
    out += hex[data[i] & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 s;
  s.update(bytes);
  const auto d = s.finish();
  return to_hex(d.data(), d.size());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view bytes) {
  // RFC 2104 with B = 64: K0 = K padded (or H(K) if longer than B); H((K0 ^ opad) || H((K0 ^ ipad) || m)).
  std::array<unsigned char, 64> k0{};
  if (key.size() > k0.size()) {
    Sha256 s;
    s.update(key);
    const auto d = s.finish();
    std::memcpy(k0.data(), d.data(), d.size());
  } else {
    std::memcpy(k0.data(), key.data(), key.size());
  }
  std::array<char, 64> ipad{}, opad{};
  for (std::size_t i = 0; i < k0.size(); ++i) {
    ipad[i] = static_cast<char>(k0[i] ^ 0x36);
    opad[i] = static_cast<char>(k0[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.update(std::string_view(ipad.data(), ipad.size()));
  inner.update(bytes);
  const auto ih = inner.finish();
  Sha256 outer;
  outer.update(std::string_view(opad.data(), opad.size()));
  outer.update(std::string_view(reinterpret_cast<const char*>(ih.data()), ih.size()));
  const auto d = outer.finish();
  return to_hex(d.data(), d.size());
}

std::string sha256_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(
        path + ": cannot open the file for reading: " + std::error_code(errno, std::generic_category()).message());
  }
  Sha256 s;
  std::array<char, 65536> buf;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path +
                               ": cannot read the file: " + std::error_code(err, std::generic_category()).message());
    }
    if (n == 0) break;
    s.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  ::close(fd);
  const auto d = s.finish();
  return to_hex(d.data(), d.size());
}

}  // namespace dpmu::runtime
