#include "minidl/data/tensor_dataset.hpp"

#include <utility>

#include "minidl/tensor/error.hpp"

namespace minidl::data {

TensorDataset::TensorDataset(Tensor inputs, Tensor targets) : inputs_(std::move(inputs)), targets_(std::move(targets)) {
  if (!inputs_.defined() || !targets_.defined())
    throw Error("TensorDataset: inputs and targets must be defined tensors");
  if (inputs_.dim() < 1 || targets_.dim() < 1 || inputs_.size(0) != targets_.size(0))
    throw Error(cat("TensorDataset: size mismatch between tensors: inputs have shape ", to_string(inputs_.shape()),
                    " and targets have shape ", to_string(targets_.shape()), "; their first dimensions must match"));
}

}  // namespace minidl::data
