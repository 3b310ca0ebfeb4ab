#pragma once
// Loss modules: the functional losses (minidl/ops/cross_entropy.hpp) with their options
// fixed at construction, as PyTorch's nn.CrossEntropyLoss.
#include <string>

#include "minidl/nn/module.hpp"
#include "minidl/ops/cross_entropy.hpp"

namespace minidl::nn {

/// PyTorch's CrossEntropyLossOptions: weight, ignore_index = -100, reduction = Mean,
/// label_smoothing = 0 (see CrossEntropyOptions).
using CrossEntropyLossOptions = CrossEntropyOptions;

/// nn.CrossEntropyLoss: cross_entropy(logits, targets, options). A class weight given in
/// the options is a buffer named "weight", as in PyTorch's state_dict.
class CrossEntropyLoss : public Module {
 public:
  explicit CrossEntropyLoss(CrossEntropyLossOptions options = {});

  /// logits (N, C) or (C), targets (N) or rank 0 holding class indices.
  Tensor forward(const Tensor& logits, const Tensor& targets);
  Tensor operator()(const Tensor& logits, const Tensor& targets) { return forward(logits, targets); }
  /// A loss needs its targets: always an error naming the two-argument call.
  Tensor forward(const Tensor& input) override;

  std::string type_name() const override { return "CrossEntropyLoss"; }
  const CrossEntropyLossOptions& options() const { return options_; }

 private:
  CrossEntropyLossOptions options_;
};

}  // namespace minidl::nn
