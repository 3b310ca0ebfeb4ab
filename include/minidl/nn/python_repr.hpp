#pragma once
// Values printed the way Python's repr() prints them, so module reprs read as PyTorch's:
// 1e-05, 0.1, 1.0, True, (64,), (2, 3).
#include <optional>
#include <string>

#include "minidl/tensor/shape.hpp"

namespace minidl::nn {

/// Python's repr of a float: the shortest digits that read back to the same double,
/// fixed notation for exponents in [-4, 16), else 1e-05 style.
std::string python_float(double value);
/// python_float, or "None" when empty.
std::string python_float(const std::optional<double>& value);
std::string python_bool(bool value);
/// A shape as a Python tuple: (64,) or (2, 3).
std::string python_tuple(const Shape& shape);

}  // namespace minidl::nn
