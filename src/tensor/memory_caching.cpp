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

}  // namespace

bool no_caching_requested(const char* value) {
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

bool read_memory_caching_switch() {
  const bool on = !kSanitized && !no_caching_requested(std::getenv("MINIDL_NO_MEMORY_CACHING"));
  int8_t unread = -1;  // a set_memory_caching() that came first wins
  caching_switch.compare_exchange_strong(unread, on ? 1 : 0, std::memory_order_relaxed);
  return caching_switch.load(std::memory_order_relaxed) != 0;
}

void set_memory_caching(bool on) { caching_switch.store(on && !kSanitized ? 1 : 0, std::memory_order_relaxed); }

}  // namespace minidl::detail
