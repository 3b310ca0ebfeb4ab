#pragma once
// DyT, Dynamic Tanh (Zhu, Chen, He, LeCun and Liu, "Transformers without Normalization",
// CVPR 2025, Algorithm 1): an elementwise replacement for a norm layer,
//   y = weight * tanh(alpha * x) + bias,
// with alpha one learnable scalar and weight, bias per feature. Names, init and text as the
// paper's reference module (DynamicTanh): alpha (1) = alpha_init_value, weight = 1, bias = 0.
// No statistics: every element is transformed on its own, so a batch's rows never meet.
#include "minidl/nn/module.hpp"

namespace minidl::nn {

struct DyTOptions {
  int64_t normalized_shape;       // the features, C
  double alpha_init_value = 0.5;  // the paper's default for a transformer's norms
  bool channels_last = true;      // features on the last dim (N, *, C); false: dim 1 (N, C, *)
};

class DyT : public Module {
 public:
  Tensor alpha;   // (1)
  Tensor weight;  // (C)
  Tensor bias;    // (C)

  explicit DyT(DyTOptions options);
  explicit DyT(int64_t num_features, double alpha_init_value = 0.5)
      : DyT(DyTOptions{.normalized_shape = num_features, .alpha_init_value = alpha_init_value}) {}

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "DyT"; }
  std::string extra_repr() const override;
  const DyTOptions& options() const { return options_; }
  /// alpha = alpha_init_value, weight = 1, bias = 0.
  void reset_parameters();

 private:
  DyTOptions options_;
};

}  // namespace minidl::nn
