#include "lesson/arch.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

std::string short_name(Arch arch) { return arch == Arch::CNN ? "cnn" : "mlp"; }

Arch parse_arch(const std::string& name) {
  if (name == "mlp") return Arch::MLP;
  if (name == "cnn") return Arch::CNN;
  throw UsageError(cat("--arch: unknown architecture \"", name, "\": choose from mlp, cnn"));
}

}  // namespace minidl::lesson
