#pragma once
/// @file memory.hpp
/// Up-front memory checks: work whose memory is known before it starts is refused, naming the
/// input, rather than ending in an allocation failure half-way (docs/reliability.md).
#include <string>

namespace dpmu::runtime {

/// Physical memory of this machine in bytes (sysconf), or 0 if unknown.
double physical_memory_bytes();

/// Refuse work that needs about `bytes` when `factor` × bytes exceeds the physical memory:
/// throws std::invalid_argument "`what` needs about X GB in memory but this machine has Y GB;
/// `advice`". Does nothing when the machine's memory is unknown.
void check_fits_in_memory(double bytes, const std::string& what, const std::string& advice, double factor = 1.0);

}  // namespace dpmu::runtime
