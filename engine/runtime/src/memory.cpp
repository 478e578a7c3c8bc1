// Up-front memory checks (docs/reliability.md "Validation before any work").
#include "dpmu/runtime/memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>

namespace dpmu::runtime {

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0.0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

void check_fits_in_memory(double bytes, const std::string& what, const std::string& advice, double factor) {
  const double ram = physical_memory_bytes();
  if (ram > 0 && !(factor * bytes <= ram)) {
    throw std::invalid_argument(
        fmt::format("{} needs about {:.1f} GB in memory{} but this machine has {:.1f} GB; {}", what, bytes / 1e9,
                    factor != 1.0 ? fmt::format(" ({:g}x that at its peak)", factor) : "", ram / 1e9, advice));
  }
}

}  // namespace dpmu::runtime
