#pragma once
// Working memory for the convolution kernels (im2col + sgemm, Winograd).
#include <cstdint>
#include <vector>

namespace minidl::kernels {

/// The start of buffer, grown to hold count floats from a 64-byte boundary: the transforms
/// store whole 64-byte vectors, and one that straddles two cache lines costs two.
inline float* aligned(std::vector<float>& buffer, int64_t count) {
  if (buffer.size() < size_t(count + 16)) buffer.resize(size_t(count + 16));
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + (64 - address % 64) % 64 / sizeof(float);
}

/// This thread's working buffers, one a slot, kept and reused across calls: a training step
/// makes the same shapes every time, so after the first only a larger call allocates. Fresh
/// buffers of a megabyte or more come from mmap and page-faulted on every step. Valid until
/// the next call on this thread; a kernel takes them once, on the calling thread, before
/// its loops. Every use overwrites what it reads.
enum class ConvSlot {
  Columns,      // im2col's columns
  Product,      // the product, or dout in the product's layout
  Weights,      // Winograd's U
  Inputs,       // V, or dV
  Products,     // M, or dM
  WeightGrads,  // dU
  Count
};
inline float* conv_scratch(ConvSlot slot, int64_t count) {
  thread_local std::vector<float> buffers[int(ConvSlot::Count)];
  return aligned(buffers[int(slot)], count);
}

}  // namespace minidl::kernels
