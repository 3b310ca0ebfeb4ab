#pragma once
// GroupNorm, as torch.nn's: input (N, C, *); each example's channels split into
// num_groups groups, each group normalized over its channels and positions; weight and
// bias per channel. G = 1 normalizes each example as a whole, G = C each channel.
#include "minidl/nn/module.hpp"

namespace minidl::nn {

struct GroupNormOptions {
  int64_t num_groups;    // G, must divide num_channels
  int64_t num_channels;  // C
  double eps = 1e-5;     // added to the variance inside the sqrt
  bool affine = true;    // learnable weight (1) and bias (0), C each
};

class GroupNorm : public Module {
 public:
  Tensor weight;  // (C), absent when !affine
  Tensor bias;    // (C), absent when !affine

  explicit GroupNorm(GroupNormOptions options);
  GroupNorm(int64_t num_groups, int64_t num_channels) : GroupNorm(GroupNormOptions{num_groups, num_channels}) {}

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "GroupNorm"; }
  std::string extra_repr() const override;
  const GroupNormOptions& options() const { return options_; }
  /// weight = 1, bias = 0.
  void reset_parameters();

 private:
  void check_input(const Tensor& input) const;  // (N, num_channels, *)
  GroupNormOptions options_;
};

}  // namespace minidl::nn
