#include "models/norm_kind.hpp"

#include <array>

#include "minidl/tensor/error.hpp"

namespace minidl::apps {

std::string short_name(NormKind norm) {
  constexpr std::array<const char*, 8> kNames{"none",  "batch",    "layer",        "rms",
                                              "group", "instance", "batch-masked", "dyt"};
  return kNames[size_t(norm)];
}

NormKind parse_norm(const std::string& name, std::span<const NormKind> allowed, const std::string& option) {
  std::string choices;
  for (NormKind norm : allowed) {
    if (short_name(norm) == name) return norm;
    choices += (choices.empty() ? "" : ", ") + short_name(norm);
  }
  throw UsageError(cat(option, "unknown norm \"", name, "\": choose from ", choices));
}

}  // namespace minidl::apps
