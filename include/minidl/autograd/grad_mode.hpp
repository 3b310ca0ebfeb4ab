#pragma once

namespace minidl {

/// Whether ops record the graph on this thread (on by default).
bool grad_enabled();

/// While alive, ops record nothing (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace minidl
