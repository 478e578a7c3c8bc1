// The `dpmu` command's "charged, not delivered" exit (docs/privacy.md "Charge first, then speak").
// A file of its own because its handler calls _exit: the R package leaves it out (R is interrupted
// cooperatively, and R CMD check refuses compiled code that can terminate R).
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "dpmu/api/ledger.hpp"

namespace dpmu::api {

namespace {

// The message, copied before the handler is armed (a handler may only call async-signal-safe
// functions: write and _exit).
char g_charged_message[4096];
std::size_t g_charged_length = 0;

extern "C" void on_interrupt_after_charge(int sig) {
  if (g_charged_length > 0) {
    const ssize_t ignored = ::write(STDERR_FILENO, g_charged_message, g_charged_length);
    (void)ignored;
  }
  ::_exit(128 + sig);
}

void arm_exit_after_charge(const std::string& message, const int* signals, std::size_t count) {
  g_charged_length = std::min(message.size(), sizeof g_charged_message);
  std::memcpy(g_charged_message, message.data(), g_charged_length);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt_after_charge;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < count; ++i) sigaction(signals[i], &sa, nullptr);
}

}  // namespace

void defer_interrupts_around_charges(std::string name) {
  detail::set_after_charge_handler(std::move(name), arm_exit_after_charge);
}

}  // namespace dpmu::api
