#pragma once
// TensorDataset: examples stored as the rows of two tensors, like torch.utils.data.TensorDataset.
#include <cstdint>

#include "minidl/tensor/tensor.hpp"

namespace minidl::data {

/// Example i is (inputs[i], targets[i]). Both tensors must have the same first dimension.
class TensorDataset {
 public:
  /// Throws minidl::Error naming both shapes when the first dimensions differ.
  TensorDataset(Tensor inputs, Tensor targets);

  int64_t size() const { return inputs_.size(0); }
  const Tensor& inputs() const { return inputs_; }    // (N, ...)
  const Tensor& targets() const { return targets_; }  // (N, ...)

 private:
  Tensor inputs_;
  Tensor targets_;
};

}  // namespace minidl::data
