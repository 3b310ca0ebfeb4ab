#pragma once
// Working memory for the norm kernels.
#include <cstddef>
#include <vector>

namespace minidl::kernels {

/// At least n values of this thread's scratch buffer of T, kept and reused across calls (a
/// kernel call allocates nothing once the buffer is big enough). Valid until the next
/// call on this thread: a kernel takes it once, on the calling thread, before its loops.
template <typename T = float>
inline T* norm_scratch(size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace minidl::kernels
