#include "minidl/nn/utils/clip_grad.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn::utils {
namespace {

// The p-norm of n values (inf: the largest absolute value), accumulated in double and
// rounded once, as torch.norm returns a float32 tensor.
float vector_norm(const float* x, int64_t n, double p) {
  if (std::isinf(p)) {
    float largest = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float a = std::fabs(x[i]);
      if (std::isnan(a)) return a;  // max over a NaN is NaN in PyTorch
      largest = std::max(largest, a);
    }
    return largest;
  }
  double total = 0.0;
  if (p == 2.0) {
    for (int64_t i = 0; i < n; ++i) total += double(x[i]) * double(x[i]);
    return float(std::sqrt(total));
  }
  if (p == 1.0) {
    for (int64_t i = 0; i < n; ++i) total += std::fabs(double(x[i]));
    return float(total);
  }
  for (int64_t i = 0; i < n; ++i) total += std::pow(std::fabs(double(x[i])), p);
  return float(std::pow(total, 1.0 / p));
}

std::vector<Tensor> gradients(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  if (!(norm_type > 0.0)) throw UsageError(cat("clip_grad_norm_: norm_type should be > 0 or inf, got ", norm_type));
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = gradients(parameters);
  if (grads.empty()) return Tensor::scalar(0.0f);
  std::vector<float> norms;  // (number of gradients,)
  for (const Tensor& g : grads) norms.push_back(vector_norm(g.data(), g.numel(), norm_type));
  const float total = grads.size() == 1 ? norms[0] : vector_norm(norms.data(), int64_t(norms.size()), norm_type);
  if (error_if_nonfinite && !std::isfinite(total))
    throw UsageError(cat("clip_grad_norm_: the total norm of order ", norm_type, " for gradients from `parameters` is ",
                         total,
                         ", non-finite, so it cannot be clipped; to scale the gradients by it anyway, set "
                         "error_if_nonfinite=false"));
  const float coef = float(max_norm) / (total + 1e-6f);
  const float clamped = coef > 1.0f ? 1.0f : coef;  // torch.clamp(max=1) keeps a NaN
  for (Tensor g : grads) {
    float* values = g.data();
    for (int64_t i = 0; i < g.numel(); ++i) values[i] *= clamped;
    g.bump_version();
  }
  return Tensor::scalar(total);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  const float high = float(clip_value), low = -high;
  for (Tensor g : gradients(parameters)) {
    float* values = g.data();
    // clamp(min, max) = min(max(x, low), high), NaN kept, as PyTorch's clamp.
    for (int64_t i = 0; i < g.numel(); ++i)
      if (!std::isnan(values[i])) values[i] = std::min(std::max(values[i], low), high);
    g.bump_version();
  }
}

}  // namespace minidl::nn::utils
