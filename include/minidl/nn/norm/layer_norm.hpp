#pragma once
// LayerNorm, as torch.nn's: each example normalized over its trailing dims; the same in
// training and eval.
#include "minidl/nn/module.hpp"

namespace minidl::nn {

struct LayerNormOptions {
  Shape normalized_shape;          // the trailing dims normalized together, e.g. {64}
  double eps = 1e-5;               // added to the variance inside the sqrt
  bool elementwise_affine = true;  // learnable weight (1) of shape normalized_shape
  bool bias = true;                // and bias (0), when elementwise_affine
};

class LayerNorm : public Module {
 public:
  Tensor weight;  // normalized_shape, absent when !elementwise_affine
  Tensor bias;    // normalized_shape, absent when !elementwise_affine or !bias

  explicit LayerNorm(LayerNormOptions options);
  explicit LayerNorm(int64_t normalized_size) : LayerNorm(LayerNormOptions{{normalized_size}}) {}

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;
  const LayerNormOptions& options() const { return options_; }
  /// weight = 1, bias = 0.
  void reset_parameters();

 private:
  LayerNormOptions options_;
};

}  // namespace minidl::nn
