#pragma once
// Which network the digits train: the lesson's deep MLP (the default) or a small CNN.
#include <string>

namespace minidl::lesson {

enum class Arch { MLP, CNN };

/// "mlp", "cnn": the names --arch takes.
std::string short_name(Arch arch);
/// The Arch of a short name; throws UsageError listing the choices for any other.
Arch parse_arch(const std::string& name);

}  // namespace minidl::lesson
