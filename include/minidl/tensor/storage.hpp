#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace minidl {

/// A 64-byte aligned float buffer, shared by a tensor and its views.
/// Buffers come from a per-thread cache of freed blocks by size class (MINIDL_NO_MEMORY_CACHING=1
/// turns it off, for valgrind), so a training loop stops calling malloc after step one.
class Storage {
 public:
  explicit Storage(size_t size);  // uninitialised
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  /// PyTorch's _version: every in-place write to the buffer bumps it, so a backward can
  /// tell that a value it saved has changed since (a view or a detach() shares the count).
  uint32_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  float* data_;  // owned; returned to the block cache by the destructor
  size_t size_;
  size_t block_floats_;  // what the block holds: its size class's, at least size_
  uint32_t version_ = 0;
};

/// Drops the calling thread's cached blocks (tests use it to measure peak memory).
void release_cached_blocks();

}  // namespace minidl
