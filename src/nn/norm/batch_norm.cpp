#include "minidl/nn/norm/batch_norm.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/norm/batch_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

BatchNormBase::BatchNormBase(BatchNormOptions options) : options_(options) {
  if (options.num_features <= 0)
    throw Error(cat("BatchNorm: num_features must be positive, got ", options.num_features));
  const Shape c{options.num_features};
  if (options.affine) {
    weight = register_parameter("weight", Tensor::ones(c));
    bias = register_parameter("bias", Tensor::zeros(c));
  }
  if (options.track_running_stats) {
    running_mean = register_buffer("running_mean", Tensor::zeros(c));
    running_var = register_buffer("running_var", Tensor::ones(c));
    num_batches_tracked = register_buffer("num_batches_tracked", Tensor::scalar(0.0f), DType::I64);
  }
}

void BatchNormBase::reset_running_stats() {
  if (!options_.track_running_stats) return;
  running_mean.fill_(0.0f);
  running_var.fill_(1.0f);
  num_batches_tracked.fill_(0.0f);
}

void BatchNormBase::reset_parameters() {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  reset_running_stats();
  if (!options_.affine) return;
  weight.fill_(1.0f);
  bias.fill_(0.0f);
}

Tensor BatchNormBase::forward(const Tensor& input) {
  check_input_dim(input);
  if (input.size(1) != options_.num_features)
    throw Error(cat(type_name(), "(", options_.num_features, "): expected input with ", options_.num_features,
                    " channels in dim 1, got input of shape ", to_string(input.shape())));
  // As PyTorch: in training with tracked statistics, count the batch and move the running
  // statistics; without tracked statistics, batch statistics in eval too.
  const bool update = is_training() && options_.track_running_stats;
  double factor = options_.momentum.value_or(0.0);
  if (update) {
    if (input.numel() / options_.num_features == 1)  // refuse before counting the batch (an empty one counts)
      throw Error(
          cat("Expected more than 1 value per channel when training, got input size ", to_string(input.shape())));
    num_batches_tracked.data()[0] += 1.0f;
    if (!options_.momentum) factor = 1.0 / double(num_batches_tracked.data()[0]);
  }
  const bool batch_stats = is_training() || !options_.track_running_stats;
  return batch_norm(input, running_mean, running_var, weight, bias, batch_stats, factor, options_.eps);
}

void BatchNormBase::fill_missing_state(const std::string& prefix, StateDict& state) const {
  // PyTorch's _load_from_state_dict: a state without num_batches_tracked (saved before the
  // buffer existed, or without its metadata) loads as 0, strict or not.
  if (!options_.track_running_stats) return;
  const std::string name = prefix + "num_batches_tracked";
  for (const StateEntry& entry : state)
    if (entry.name == name) return;
  state.push_back({name, Tensor::scalar(0.0f), DType::I64});
}

std::string BatchNormBase::extra_repr() const {
  return cat(options_.num_features, ", eps=", python_float(options_.eps),
             ", momentum=", python_float(options_.momentum), ", affine=", python_bool(options_.affine),
             ", track_running_stats=", python_bool(options_.track_running_stats));
}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 2 && input.dim() != 3)
    throw Error(cat("BatchNorm1d: expected 2D or 3D input (got ", input.dim(), "D input of shape ",
                    to_string(input.shape()), ")"));
}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 4)
    throw Error(
        cat("BatchNorm2d: expected 4D input (got ", input.dim(), "D input of shape ", to_string(input.shape()), ")"));
}

}  // namespace minidl::nn
