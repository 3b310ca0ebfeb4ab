#include "tensor/memory_caching.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace minidl::detail {
namespace {

// Under AddressSanitizer every block goes straight to the system, so that a use after free
// of a buffer, a tensor header or a node is still caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::atomic<bool>& caching_flag() {
  static std::atomic<bool> flag(!kSanitized && !no_caching_requested(std::getenv("MINIDL_NO_MEMORY_CACHING")));
  return flag;
}

}  // namespace

bool no_caching_requested(const char* value) {
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

bool memory_caching_enabled() { return caching_flag().load(std::memory_order_relaxed); }

void set_memory_caching(bool on) { caching_flag().store(on && !kSanitized, std::memory_order_relaxed); }

}  // namespace minidl::detail
