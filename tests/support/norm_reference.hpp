#pragma once
// Plain-loop references for the normalization tests, in double, written independently
// of the library's kernels and composites.
#include <cmath>
#include <functional>
#include <vector>

#include "minidl/minidl.hpp"

namespace minidl::testing {

/// Normal values with this mean and std, from a fixed seed.
inline Tensor random_normal(const Shape& shape, uint64_t seed, float mean = 0.0f, float std = 1.0f) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, mean, std);
}

struct Moments {
  std::vector<double> mean, biased_var, unbiased_var;
};

/// Per-channel moments of x (N, C, *) over N and the positions.
inline Moments channel_moments_reference(const Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1), inner = x.numel() / (n * c);
  Moments m{std::vector<double>(size_t(c)), std::vector<double>(size_t(c)), std::vector<double>(size_t(c))};
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t s = 0; s < inner; ++s) sum += x.data()[(i * c + ch) * inner + s];
    const double count = double(n * inner), mu = sum / count;
    double squares = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t s = 0; s < inner; ++s) squares += std::pow(x.data()[(i * c + ch) * inner + s] - mu, 2);
    m.mean[size_t(ch)] = mu;
    m.biased_var[size_t(ch)] = squares / count;
    m.unbiased_var[size_t(ch)] = squares / (count - 1);
  }
  return m;
}

/// (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c] for x (N, C, *).
inline Tensor channel_normalize_reference(const Tensor& x, const std::vector<double>& mean,
                                          const std::vector<double>& var, double eps, const Tensor& weight,
                                          const Tensor& bias) {
  const int64_t n = x.size(0), c = x.size(1), inner = x.numel() / (n * c);
  Tensor out = Tensor::empty(x.shape());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < inner; ++s) {
        const int64_t k = (i * c + ch) * inner + s;
        const double w = weight.defined() ? weight.data()[ch] : 1.0, b = bias.defined() ? bias.data()[ch] : 0.0;
        out.data()[k] = float((x.data()[k] - mean[size_t(ch)]) / std::sqrt(var[size_t(ch)] + eps) * w + b);
      }
  return out;
}

/// Each run of `cols` values normalized (centered: LayerNorm, else RMSNorm), then
/// weight and bias (cols values, repeating per row) when defined.
inline Tensor row_normalize_reference(const Tensor& x, int64_t cols, bool centered, double eps, const Tensor& weight,
                                      const Tensor& bias) {
  Tensor out = Tensor::empty(x.shape());
  for (int64_t r = 0; r < x.numel() / cols; ++r) {
    const float* xr = x.data() + r * cols;
    double mu = 0.0;
    if (centered) {
      for (int64_t j = 0; j < cols; ++j) mu += xr[j];
      mu /= double(cols);
    }
    double squares = 0.0;
    for (int64_t j = 0; j < cols; ++j) squares += (xr[j] - mu) * (xr[j] - mu);
    const double rstd = 1.0 / std::sqrt(squares / double(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) {
      const double w = weight.defined() ? weight.data()[j] : 1.0, b = bias.defined() ? bias.data()[j] : 0.0;
      out.data()[r * cols + j] = float((xr[j] - mu) * rstd * w + b);
    }
  }
  return out;
}

/// d sum(y * dy) / dx for y = (x - mean) / sqrt(var + eps) over groups of `count` values,
/// in double. Value j of group k is x[index(k, j)]: rows of a LayerNorm, channels of a BatchNorm.
inline Tensor normalize_input_grad_reference(const Tensor& x, const Tensor& dy, int64_t groups, int64_t count,
                                             double eps, const std::function<int64_t(int64_t, int64_t)>& index) {
  Tensor dx = Tensor::empty(x.shape());
  for (int64_t k = 0; k < groups; ++k) {
    double mu = 0.0, var = 0.0, mean_dy = 0.0, mean_dy_xhat = 0.0;
    for (int64_t j = 0; j < count; ++j) mu += x.data()[index(k, j)];
    mu /= double(count);
    for (int64_t j = 0; j < count; ++j) var += std::pow(x.data()[index(k, j)] - mu, 2);
    const double rstd = 1.0 / std::sqrt(var / double(count) + eps);
    for (int64_t j = 0; j < count; ++j) {
      mean_dy += dy.data()[index(k, j)] / double(count);
      mean_dy_xhat += dy.data()[index(k, j)] * (x.data()[index(k, j)] - mu) * rstd / double(count);
    }
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = index(k, j);
      dx.data()[i] = float(rstd * (dy.data()[i] - mean_dy - (x.data()[i] - mu) * rstd * mean_dy_xhat));
    }
  }
  return dx;
}

/// Number of values in a module's parameters, and in its buffers.
inline int64_t parameter_count(const nn::Module& m) {
  int64_t total = 0;
  for (const Tensor& p : m.parameters()) total += p.numel();
  return total;
}
inline int64_t buffer_count(const nn::Module& m) {
  int64_t total = 0;
  for (const auto& [name, b] : m.named_buffers()) total += b.numel();
  return total;
}

/// Every gradient of f w.r.t. inputs from one backward through sum(f * w), w fixed.
inline std::vector<Tensor> gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                     std::vector<Tensor> inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& x : inputs) leaves.push_back(x.clone().detach().requires_grad_(true));
  Tensor out = f(leaves);
  Generator gen(99);
  sum(mul(out, Tensor::randn(out.shape(), gen))).backward();
  std::vector<Tensor> grads{out.detach()};
  for (const Tensor& leaf : leaves) grads.push_back(leaf.grad());
  return grads;
}

}  // namespace minidl::testing
