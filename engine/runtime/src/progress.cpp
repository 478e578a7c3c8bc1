#include "dpmu/runtime/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace dpmu::runtime {

namespace {
std::string duration_text(double s) {
  if (!(s < 1e9)) return "?";
  const auto t = static_cast<long long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}
}  // namespace

Progress::Progress(std::uint64_t replicates_total, std::size_t cells_total, std::size_t cells_done, bool quiet,
                   const WorkEstimate* work)
    : replicates_total_(replicates_total),
      cells_total_(cells_total),
      cells_done_(cells_done),
      quiet_(quiet),
      work_(work),
      tty_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {
  if (!quiet_) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() { finish(); }

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!quiet_) report(true);
}

void Progress::loop() {
  const auto period = tty_ ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(10000);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!cv_.wait_for(lock, period, [this] { return stopping_; })) report(false);
}

void Progress::report(bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto done = replicates_done_.load(std::memory_order_relaxed);
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta =
      work_ ? work_->eta_seconds(elapsed) : (rate > 0 ? static_cast<double>(replicates_total_ - done) / rate : 1e99);
  const std::string work_text = work_ ? fmt::format(", {:.1f}% of predicted work", 100.0 * work_->fraction_done()) : "";
  std::string line =
      fmt::format("dpmu: cells {}/{}, replicates {}/{} ({:.0f}/s){}, {} {}", cells_done_.load(), cells_total_, done,
                  replicates_total_, rate, work_text, final ? "elapsed" : "ETA", duration_text(final ? elapsed : eta));
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace dpmu::runtime
