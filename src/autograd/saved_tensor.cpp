#include "minidl/autograd/saved_tensor.hpp"

#include "minidl/autograd/node.hpp"

namespace minidl {

SavedTensor::SavedTensor(const Tensor& input) : tensor_(input.detach()), version_(input.version()) {
  // A view of the producer's name: an input that has a producer requires grad, so the
  // consumer's node holds it (and its producer) for as long as its backward can run.
  if (input.grad_fn()) producer_ = input.grad_fn()->name;
}

SavedTensor SavedTensor::output(const Tensor& out, std::string_view op) {
  SavedTensor saved(out);
  saved.producer_ = op;
  return saved;
}

void SavedTensor::throw_modified() const {
  const std::string origin =
      producer_.empty() ? std::string() : cat(", which is output 0 of ", producer_, "Backward0,");
  throw SavedTensorModified(
      cat("one of the variables needed for gradient computation has been modified by an inplace "
          "operation: [torch.FloatTensor ",
          to_string(tensor_.shape()), "]", origin, " is at version ", tensor_.version(), "; expected version ",
          version_, " instead."));
}

}  // namespace minidl
