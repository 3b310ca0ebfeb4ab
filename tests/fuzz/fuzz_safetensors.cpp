// libFuzzer target: the safetensors checkpoint reader.
#include <string_view>

#include "fuzz_support.hpp"
#include "minidl/io/safetensors.hpp"

using namespace minidl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_value_or_usage_error([&] {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    nn::StateDict state = io::parse_safetensors(bytes, fuzz::kName);
    uint64_t total = 0;  // the entries' bytes can never exceed the input's
    for (const nn::StateEntry& entry : state) {
      int64_t numel = 1;
      for (int64_t s : entry.value.shape()) numel *= s;
      fuzz::require(numel == entry.value.numel(), cat(entry.name, ": numel disagrees with the shape"));
      total += uint64_t(numel) * (entry.dtype == DType::I64 ? 8 : 4);
    }
    fuzz::require(total <= size, cat("entries hold ", total, " bytes, more than the input's ", size));
  });
  return 0;
}
