#pragma once
// The caches behind tensor memory, and their switch.
//
// Storage's float buffers come from a per-thread cache of freed blocks by size class
// (storage.cpp); tensor headers and graph nodes from per-thread free lists
// (small_blocks.hpp). Both are on by default and off in an AddressSanitizer build.
// MINIDL_NO_MEMORY_CACHING=1 in the environment turns both off for a run (every block then
// goes to the system when freed, so valgrind or a sanitizer sees every use after free).
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace minidl::detail {

/// The switch: 1 on, 0 off, -1 before the environment was read. Constant-initialized, so an
/// allocation during static initialization finds it too; every allocation and free of a
/// step reads it, inline (an out-of-line call showed in the step's profile).
inline std::atomic<int8_t> caching_switch{-1};
/// Reads the environment (and the build) once and sets the switch: what the first call sees.
bool read_memory_caching_switch();

/// Whether freed blocks are kept for reuse: false under AddressSanitizer, or when the
/// environment sets MINIDL_NO_MEMORY_CACHING to anything but "" or "0" (read once).
inline bool memory_caching_enabled() {
  const int8_t on = caching_switch.load(std::memory_order_relaxed);
  return on < 0 ? read_memory_caching_switch() : on != 0;
}
/// Turns caching on or off for the whole process from now on (tests). Turning it on has
/// no effect in an AddressSanitizer build. Blocks already cached stay until released.
void set_memory_caching(bool on);
/// The reading of MINIDL_NO_MEMORY_CACHING's value (null when unset): true turns caching off.
bool no_caching_requested(const char* value);

/// Storage's block sizes: requests round up to 64 bytes, then to a size class (64-byte
/// steps up to 4 KiB, four classes per doubling above, at most 25% larger than asked);
/// requests above kLargestCachedBlock are never cached and keep their 64-byte rounding.
inline constexpr size_t kBlockAlignment = 64;
inline constexpr size_t kLargestCachedBlock = size_t(64) << 20;
/// The bytes a Storage of `count` floats holds.
size_t storage_block_bytes(size_t count);

/// The calling thread's cache of freed Storage buffers.
struct StorageCacheStats {
  size_t blocks = 0;
  size_t bytes = 0;
};
StorageCacheStats storage_cache_stats();
/// The most bytes a thread keeps cached (256 MiB by default); a buffer freed past it goes
/// to the system. Process-wide; tests lower it.
size_t storage_cache_limit();
void set_storage_cache_limit(size_t bytes);

}  // namespace minidl::detail
