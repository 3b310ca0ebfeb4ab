#pragma once
// A (height, width) pair that one integer also fills, as PyTorch's kernel_size=3 or (3, 5).
#include <cstdint>
#include <string>

namespace minidl {

struct Size2 {
  Size2(int64_t both) : h(both), w(both) {}  // NOLINT: implicit, so 3 reads as (3, 3)
  Size2(int64_t h, int64_t w) : h(h), w(w) {}
  int64_t h, w;
  bool operator==(const Size2&) const = default;
};

/// "(3, 5)", as PyTorch prints a pair.
inline std::string to_string(const Size2& s) {
  std::string text(1, '(');  // appended piece by piece: GCC 12 warns (-Wrestrict) on "(" + std::string
  text.append(std::to_string(s.h)).append(", ").append(std::to_string(s.w)).push_back(')');
  return text;
}

}  // namespace minidl
