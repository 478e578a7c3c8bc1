#include "dpmu/runtime/secure_random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpmu::runtime {

void SecureRng::refill() {
  auto* p = reinterpret_cast<unsigned char*>(buffer_.data());
  std::size_t need = sizeof(buffer_);
  while (need > 0) {
    const ssize_t got = getrandom(p, need, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("SecureRng: getrandom failed: ") + std::strerror(errno));
    }
    p += got;
    need -= static_cast<std::size_t>(got);
  }
  index_ = 0;
}

SecureRng::result_type SecureRng::operator()() {
  if (index_ == buffer_.size()) refill();
  return buffer_[index_++];
}

}  // namespace dpmu::runtime
