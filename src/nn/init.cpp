#include "minidl/nn/init.hpp"

#include <cmath>
#include <vector>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn::init {
namespace {

// Writes values into tensor in place, outside any graph (as PyTorch's init under no_grad).
Tensor fill(const Tensor& tensor, const Tensor& values) {
  NoGradGuard no_grad;
  Tensor target = tensor;
  target.copy_(values);
  return tensor;
}

int64_t fan(const Tensor& tensor, const std::string& mode) {
  if (mode != "fan_in" && mode != "fan_out")
    throw Error(cat("Mode ", mode, " not supported, please use one of ['fan_in', 'fan_out']"));
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fan_in : fan_out;
}

double kaiming_std(const Tensor& tensor, double a, const std::string& mode, const std::string& nonlinearity) {
  const int64_t chosen = fan(tensor, mode);
  return calculate_gain(nonlinearity, a) / std::sqrt(double(chosen));
}

double xavier_std(const Tensor& tensor, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / double(fan_in + fan_out));
}

// Orthonormal columns of a (m, n) with m >= n, row-major, by Gram-Schmidt in double with a
// second pass per column ("twice is enough"), each column normalized to a positive norm:
// the Q of a = QR with R's diagonal positive, which is unique, so it equals PyTorch's
// Householder Q after its sign correction q *= sign(diag(r)).
std::vector<double> orthonormal_columns(std::vector<double> a, int64_t m, int64_t n) {
  auto at = [&](int64_t row, int64_t col) -> double& { return a[size_t(row * n + col)]; };
  for (int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t k = 0; k < j; ++k) {
        double dot = 0.0;
        for (int64_t i = 0; i < m; ++i) dot += at(i, k) * at(i, j);
        for (int64_t i = 0; i < m; ++i) at(i, j) -= dot * at(i, k);
      }
    double norm = 0.0;
    for (int64_t i = 0; i < m; ++i) norm += at(i, j) * at(i, j);
    norm = std::sqrt(norm);
    if (norm == 0.0) throw Error("orthogonal_: the random matrix drawn is rank deficient");
    for (int64_t i = 0; i < m; ++i) at(i, j) /= norm;
  }
  return a;
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  for (const char* one :
       {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid"})
    if (nonlinearity == one) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    if (!std::isfinite(slope)) throw Error(cat("negative_slope ", slope, " not a valid number"));
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw Error(cat("Unsupported nonlinearity ", nonlinearity));
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  if (tensor.dim() < 2)
    throw Error(cat("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions, got shape ",
                    to_string(tensor.shape())));
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(const Tensor& tensor, double a, double b, Generator& gen) {
  return fill(tensor, Tensor::rand(tensor.shape(), gen, float(a), float(b)));
}

Tensor normal_(const Tensor& tensor, double mean, double std, Generator& gen) {
  return fill(tensor, Tensor::randn(tensor.shape(), gen, float(mean), float(std)));
}

Tensor constant_(const Tensor& tensor, double value) {
  return fill(tensor, Tensor::full(tensor.shape(), float(value)));
}
Tensor zeros_(const Tensor& tensor) { return constant_(tensor, 0.0); }
Tensor ones_(const Tensor& tensor) { return constant_(tensor, 1.0); }

Tensor xavier_uniform_(const Tensor& tensor, double gain, Generator& gen) {
  const double bound = std::sqrt(3.0) * xavier_std(tensor, gain);  // U(-a, a) has std a / sqrt 3
  return uniform_(tensor, -bound, bound, gen);
}

Tensor xavier_normal_(const Tensor& tensor, double gain, Generator& gen) {
  return normal_(tensor, 0.0, xavier_std(tensor, gain), gen);
}

Tensor kaiming_uniform_(const Tensor& tensor, double a, const std::string& mode, const std::string& nonlinearity,
                        Generator& gen) {
  if (tensor.numel() == 0) return tensor;  // PyTorch: "Initializing zero-element tensors is a no-op"
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(tensor, -bound, bound, gen);
}

Tensor kaiming_normal_(const Tensor& tensor, double a, const std::string& mode, const std::string& nonlinearity,
                       Generator& gen) {
  if (tensor.numel() == 0) return tensor;
  return normal_(tensor, 0.0, kaiming_std(tensor, a, mode, nonlinearity), gen);
}

Tensor orthogonal_(const Tensor& tensor, double gain, Generator& gen) {
  if (tensor.dim() < 2)
    throw Error(cat("Only tensors with 2 or more dimensions are supported, got shape ", to_string(tensor.shape())));
  if (tensor.numel() == 0) return tensor;
  const int64_t rows = tensor.size(0);
  const int64_t cols = tensor.numel() / rows;
  const Tensor drawn = Tensor::randn({rows, cols}, gen);  // (rows, cols), PyTorch's new(rows, cols).normal_()
  const bool wide = rows < cols;                          // PyTorch transposes it to (cols, rows)
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  std::vector<double> a(size_t(m * n));  // (m, n)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) a[size_t(wide ? c * n + r : r * n + c)] = drawn.data()[r * cols + c];
  const std::vector<double> q = orthonormal_columns(std::move(a), m, n);  // (m, n)
  Tensor values = Tensor::empty(tensor.shape());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      values.data()[r * cols + c] = float(gain * q[size_t(wide ? c * n + r : r * n + c)]);
  return fill(tensor, values);
}

}  // namespace minidl::nn::init
