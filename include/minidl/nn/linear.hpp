#pragma once
// Linear: y = x W^T + b, PyTorch's nn.Linear.
#include <cstdint>

#include "minidl/nn/module.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// nn.Linear's arguments: LinearOptions(64, 10).bias(false), as torch::nn::LinearOptions.
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features(in_features), out_features(out_features) {}
  LinearOptions& bias(bool with_bias) {
    with_bias_ = with_bias;
    return *this;
  }
  bool bias() const { return with_bias_; }

  int64_t in_features;
  int64_t out_features;

 private:
  bool with_bias_ = true;  // bias=True
};

class Linear : public Module {
 public:
  /// weight (out, in) and bias (out) drawn uniform in (-1/sqrt(in), 1/sqrt(in)) from gen,
  /// weight first (row-major) then bias, as nn.Linear: nn::init::kaiming_uniform_(weight,
  /// a = sqrt 5), whose bound is 1/sqrt(in), then init::uniform_ for the bias.
  explicit Linear(const LinearOptions& options, Generator& gen = default_generator());
  /// Linear(in_features, out_features), with a bias.
  Linear(int64_t in_features, int64_t out_features, Generator& gen = default_generator())
      : Linear(LinearOptions(in_features, out_features), gen) {}

  /// Input (*, in_features) -> (*, out_features); any leading dims, or none.
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;

  /// Redraws weight then bias in place, as the constructor does.
  void reset_parameters(Generator& gen = default_generator());

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

  Tensor weight;  // (out_features, in_features)
  Tensor bias;    // (out_features), undefined when bias = false

 private:
  void check_input(const Tensor& input) const;

  int64_t in_features_;
  int64_t out_features_;
};

}  // namespace minidl::nn
