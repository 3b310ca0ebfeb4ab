#pragma once
// Shared by the fuzz targets: a reader must either return something valid or throw
// UsageError whose message starts with the file's name. Anything else (another exception,
// a sanitizer report, a crash) is a bug libFuzzer reports.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "minidl/tensor/error.hpp"

namespace minidl::fuzz {

inline constexpr const char* kName = "fuzz-input";

[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) broken(what);
}

/// Runs parse; a UsageError is fine when its message names the input.
template <typename Parse>
void expect_value_or_usage_error(Parse&& parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    require(std::string_view(e.what()).starts_with(kName), cat("the message does not name the file: ", e.what()));
  }
}

inline std::string as_text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

}  // namespace minidl::fuzz
