// SHA-256 and HMAC-SHA256 (runtime/sha256.hpp) against the FIPS 180-2 and RFC 4231 vectors and
// against OpenSSL (an independent implementation) on random inputs of every length up to 300 bytes,
// fed whole and in random pieces.
#include "dpmu/runtime/sha256.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace rt = dpmu::runtime;

namespace {

std::string openssl_sha256(const std::string& m) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  REQUIRE(EVP_Digest(m.data(), m.size(), d, &n, EVP_sha256(), nullptr) == 1);
  return rt::to_hex(d, n);
}

std::string openssl_hmac(const std::string& k, const std::string& m) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  REQUIRE(HMAC(EVP_sha256(), k.data(), static_cast<int>(k.size()), reinterpret_cast<const unsigned char*>(m.data()),
               m.size(), d, &n) != nullptr);
  return rt::to_hex(d, n);
}

}  // namespace

TEST_CASE("sha256: FIPS 180-2 vectors", "[sha256]") {
  CHECK(rt::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(rt::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(rt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(rt::sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("hmac_sha256: RFC 4231 vectors (short, long and hashed keys)", "[sha256]") {
  CHECK(rt::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(rt::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key (longer than the block: hashed first).
  CHECK(rt::hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("sha256 and hmac_sha256 equal OpenSSL on random inputs, whole and in pieces", "[sha256]") {
  std::mt19937_64 rng(20261202);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t len = 0; len <= 300; ++len) {
    std::string m(len, '\0');
    for (auto& c : m) c = static_cast<char>(byte(rng));
    std::string k(len % 97, '\0');
    for (auto& c : k) c = static_cast<char>(byte(rng));
    INFO("length " << len);
    const std::string want = openssl_sha256(m);
    CHECK(rt::sha256_hex(m) == want);
    rt::Sha256 pieces;
    for (std::size_t i = 0; i < len;) {
      const std::size_t step = std::min<std::size_t>(len - i, 1 + static_cast<std::size_t>(byte(rng)) % 70);
      pieces.update(std::string_view(m).substr(i, step));
      i += step;
    }
    const auto d = pieces.finish();
    CHECK(rt::to_hex(d.data(), d.size()) == want);
    CHECK(rt::hmac_sha256_hex(k, m) == openssl_hmac(k, m));
  }
}
