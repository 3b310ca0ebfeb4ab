#pragma once
// Ctrl-C and SIGTERM as a user expects of a training program: the runs stop before their next
// step, what ran is reported and written, and the exit code says which signal (130, 143).
#include <atomic>

namespace minidl::apps {

/// Installs handlers for SIGINT and SIGTERM that set stop_requested(); a second signal of
/// either kind ends the process at once (the handlers reset themselves). Ignores SIGPIPE,
/// so a closed stdout is a failed write the program reports, not a silent death.
void install_signal_handlers();

/// Turns true at the first SIGINT or SIGTERM.
const std::atomic<bool>& stop_requested();

/// The signal that asked to stop (SIGINT or SIGTERM), or 0.
int stop_signal();

}  // namespace minidl::apps
