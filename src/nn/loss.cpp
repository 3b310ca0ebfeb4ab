#include "minidl/nn/loss.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl::nn {

CrossEntropyLoss::CrossEntropyLoss(CrossEntropyLossOptions options) : options_(std::move(options)) {
  if (options_.weight.defined()) options_.weight = register_buffer("weight", options_.weight);
}

Tensor CrossEntropyLoss::forward(const Tensor& logits, const Tensor& targets) {
  return cross_entropy(logits, targets, options_);
}

Tensor CrossEntropyLoss::forward(const Tensor& input) {
  throw Error(cat("CrossEntropyLoss: expected forward(logits, targets), got forward(input) with input of shape ",
                  to_string(input.shape()), " and no targets"));
}

}  // namespace minidl::nn
