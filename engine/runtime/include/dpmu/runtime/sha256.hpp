#pragma once
/// @file sha256.hpp
/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) for the privacy-budget ledger's keyed
/// fingerprints and the engine's data-file digests. Implemented here, not taken from OpenSSL, so
/// that the release API builds inside an R source package and a Python wheel with nothing but a C++
/// compiler; tested against the FIPS 180-2 and RFC 4231 vectors and, in the CMake build, against
/// OpenSSL on random inputs (tests/runtime/sha256_test.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dpmu::runtime {

/// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  /// Add bytes.
  void update(std::string_view bytes);
  /// The 32-byte digest (the object is then spent: construct a new one for another digest).
  std::array<unsigned char, 32> finish();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

/// Lowercase hex of bytes.
std::string to_hex(const unsigned char* data, std::size_t size);

/// SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// HMAC-SHA256 of `bytes` under `key` (any length) as 64 lowercase hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view bytes);

/// SHA-256 of a file's bytes as 64 lowercase hex digits.
/// @throws std::runtime_error naming the file if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace dpmu::runtime
