#pragma once
// RMSNorm, as torch.nn's (PyTorch 2.4): y = x / sqrt(mean(x^2) + eps) * weight over the
// trailing dims; no centering and no bias.
#include <optional>

#include "minidl/nn/module.hpp"

namespace minidl::nn {

struct RMSNormOptions {
  Shape normalized_shape;                    // the trailing dims normalized together, e.g. {64}
  std::optional<double> eps = std::nullopt;  // nullopt = float32 machine epsilon (1.1920929e-07)
  bool elementwise_affine = true;            // learnable weight (1) of shape normalized_shape
};

class RMSNorm : public Module {
 public:
  Tensor weight;  // normalized_shape, absent when !elementwise_affine

  explicit RMSNorm(RMSNormOptions options);
  explicit RMSNorm(int64_t normalized_size) : RMSNorm(RMSNormOptions{{normalized_size}}) {}

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "RMSNorm"; }
  std::string extra_repr() const override;
  const RMSNormOptions& options() const { return options_; }
  /// weight = 1.
  void reset_parameters();

 private:
  RMSNormOptions options_;
};

}  // namespace minidl::nn
