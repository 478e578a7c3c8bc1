#pragma once
/// @file progress.hpp
/// Progress of a long computation in the core (model searches: bma.hpp), reported to a callback the
/// caller supplies. The core only calls it: no clock, no I/O, no threads. The caller decides what to
/// do with it — print a progress line (the `dpmu` command), check for an interrupt (R, Python) — and
/// may stop the computation by throwing from the callback: the exception propagates out of the core
/// function, which holds no resources beyond RAII ones, so nothing is left half-done (a release
/// interrupted this way after its noise was drawn is charged, not delivered: docs/privacy.md
/// "Charge first, then speak").

#include <cstdint>
#include <functional>

namespace dpmu::core {

/// One report: `done` of `total` units of `phase` ("enumeration": models walked of 2^f;
/// "mcmc": iterations of the iteration bound — the chain may stop earlier when it converges;
/// "mcmc-summary": distinct visited models re-evaluated of those stored). `phase` points to a string
/// literal.
struct Progress {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  const char* phase = "";
};

/// The callback; empty: no reports. The searches call it at the start of each phase, then about
/// every kProgressInterval units of work (a few milliseconds of work at most), and at its end.
using ProgressCallback = std::function<void(const Progress&)>;

/// Units of work (models or iterations) between two reports of a search.
inline constexpr std::uint64_t kProgressInterval = 1024;

/// Call `callback` (if any) with {done, total, phase}.
inline void report_progress(const ProgressCallback& callback, std::uint64_t done, std::uint64_t total,
                            const char* phase) {
  if (callback) callback(Progress{done, total, phase});
}

}  // namespace dpmu::core
