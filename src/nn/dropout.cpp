#include "minidl/nn/dropout.hpp"

#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/activation.hpp"

namespace minidl::nn {

Dropout::Dropout(DropoutOptions options, std::shared_ptr<Generator> gen) : p_(options.p), gen_(std::move(gen)) {
  check_dropout_probability(p_);
}

Tensor Dropout::forward(const Tensor& input) {
  return dropout(input, p_, is_training(), gen_ ? *gen_ : default_generator());
}

std::string Dropout::extra_repr() const { return "p=" + python_float(p_) + ", inplace=False"; }

}  // namespace minidl::nn
