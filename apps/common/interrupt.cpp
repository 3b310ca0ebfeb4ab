#include "interrupt.hpp"

#include <csignal>

namespace minidl::apps {

namespace {

std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int signal) {  // async-signal-safe: two stores
  g_signal = signal;
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace

void install_signal_handlers() {
  static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores to an atomic flag");
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C gets the default action: the process ends
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

const std::atomic<bool>& stop_requested() { return g_stop; }

int stop_signal() { return g_signal; }

}  // namespace minidl::apps
