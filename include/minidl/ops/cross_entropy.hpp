#pragma once
// Cross-entropy loss on logits, PyTorch's F.cross_entropy for class index targets: one
// fused, stable log-softmax + NLL with its own backward. The module is nn::CrossEntropyLoss.
#include <cstdint>
#include <string>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

enum class Reduction { None, Mean, Sum };
/// "none", "mean", "sum" as PyTorch spells them.
std::string reduction_name(Reduction reduction);

struct CrossEntropyOptions {
  Tensor weight{};                        // (C) class weights; undefined = all ones (weight=None)
  int64_t ignore_index = -100;            // targets equal to it add nothing, not even to the mean's divisor
  Reduction reduction = Reduction::Mean;  // reduction='mean'
  double label_smoothing = 0.0;           // in [0, 1]
};

/// logits (N, C) with targets (N), or logits (C) with a rank-0 target; targets hold class
/// indices stored as float. Per example i with target t and weights w (ones if none):
///   loss_i = (1 - s) w_t (-log p_it) + (s / C) sum_c w_c (-log p_ic),   p = softmax(logits_i)
/// and 0 where t == ignore_index. Reduction::None gives loss_i (shape of targets),
/// Sum their sum, Mean their sum divided by the sum of w_t over the non-ignored examples
/// (NaN when every target is ignored, as in PyTorch). Only the logits get a gradient.
/// A target that is not an integer, or out of [0, C) and not ignore_index, is an error
/// naming it, its position and C.
/// Logits (N, C, d1, ...) take targets (N, d1, ...): each position is an example (None
/// gives the targets' shape). Targets of the logits' own shape are class probabilities:
///   loss_i = -sum_c w_c t'_ic log p_ic,   t' = (1 - s) t + s / C,
/// ignore_index does not apply, and Mean divides by the number of examples (N d1 ...).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options = {});

}  // namespace minidl
