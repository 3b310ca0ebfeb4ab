#pragma once
// nn::init: torch.nn.init's in-place initializers, with PyTorch's names, defaults, formulas
// and messages. Each fills the tensor's values (outside any graph, as PyTorch's run under
// no_grad) from gen and returns the tensor. Draws go in row-major order.
//
//   nn::init::kaiming_uniform_(linear.weight, std::sqrt(5.0));    // nn.Linear's default
//   nn::init::xavier_normal_(w, nn::init::calculate_gain("tanh"));
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl::nn::init {

/// The recommended gain for a nonlinearity: "linear", "conv1d", "conv2d", "conv3d",
/// "conv_transpose1d/2d/3d", "sigmoid" 1; "tanh" 5/3; "relu" sqrt 2; "leaky_relu"
/// sqrt(2 / (1 + slope^2)), slope = param or 0.01; "selu" 3/4. Others throw "Unsupported
/// nonlinearity <name>"; a non-finite leaky_relu param "negative_slope <p> not a valid number".
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

/// (fan_in, fan_out) = (size(1) * receptive field, size(0) * receptive field), the receptive
/// field being the product of dims 2 and up (torch.nn.init._calculate_fan_in_and_fan_out).
/// Fewer than 2 dims throws PyTorch's message.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

/// U(a, b).
Tensor uniform_(const Tensor& tensor, double a = 0.0, double b = 1.0, Generator& gen = default_generator());
/// N(mean, std^2).
Tensor normal_(const Tensor& tensor, double mean = 0.0, double std = 1.0, Generator& gen = default_generator());
Tensor constant_(const Tensor& tensor, double value);
Tensor zeros_(const Tensor& tensor);
Tensor ones_(const Tensor& tensor);

/// U(-a, a), a = gain sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010).
Tensor xavier_uniform_(const Tensor& tensor, double gain = 1.0, Generator& gen = default_generator());
/// N(0, std^2), std = gain sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(const Tensor& tensor, double gain = 1.0, Generator& gen = default_generator());

/// U(-bound, bound), bound = sqrt 3 gain / sqrt(fan), gain = calculate_gain(nonlinearity, a),
/// fan = fan_in or fan_out by mode (He et al. 2015). A mode other than "fan_in" / "fan_out"
/// throws "Mode <mode> not supported, please use one of ['fan_in', 'fan_out']". A tensor with no
/// elements is left as it is.
Tensor kaiming_uniform_(const Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu", Generator& gen = default_generator());
/// N(0, std^2), std = gain / sqrt(fan).
Tensor kaiming_normal_(const Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu", Generator& gen = default_generator());

/// A (semi-)orthogonal matrix times gain (Saxe et al. 2013), as PyTorch makes it: the
/// tensor seen as (size(0), numel / size(0)), Q of the QR decomposition of a standard
/// normal matrix of that shape (transposed when it is wide), signed so R's diagonal is
/// positive. Fewer than 2 dims throws "Only tensors with 2 or more dimensions are supported".
Tensor orthogonal_(const Tensor& tensor, double gain = 1.0, Generator& gen = default_generator());

}  // namespace minidl::nn::init
