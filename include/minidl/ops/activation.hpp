#pragma once
// GELU and SiLU (torch.nn.functional.gelu / silu), and dropout (F.dropout). Tanh, ReLU and
// sigmoid are in unary.hpp.
#include <string>

#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// F.gelu(x, approximate): "none" x / 2 (1 + erf(x / sqrt 2)), "tanh" PyTorch's tanh
/// approximation. Any other approximate throws PyTorch's "approximate argument must be
/// either none or tanh.".
Tensor gelu(const Tensor& x, const std::string& approximate = "none");

/// F.silu(x) = x sigmoid(x).
Tensor silu(const Tensor& x);

/// F.dropout(x, p, training): in training each element is kept with probability 1 - p,
/// drawn from gen, and scaled by 1 / (1 - p); p = 1 gives zeros; in eval, or with p = 0,
/// x itself. p outside [0, 1] throws PyTorch's "dropout probability has to be between 0
/// and 1, but got p".
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator& gen = default_generator());

/// Throws for a dropout probability outside [0, 1] (NaN included), with PyTorch's message.
void check_dropout_probability(double p);

}  // namespace minidl
