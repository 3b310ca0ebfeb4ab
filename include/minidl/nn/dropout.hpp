#pragma once
// Dropout: nn.Dropout(p=0.5). In training each element is zeroed with probability p and the
// kept ones are scaled by 1 / (1 - p); in eval the input passes unchanged.
#include <memory>

#include "minidl/nn/module.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// Dropout's arguments (torch::nn::DropoutOptions): p = 0.5.
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p(p) {}  // NOLINT: implicit, Dropout(0.1) reads as PyTorch's
  double p;
};

class Dropout : public Module {
 public:
  /// Draws its masks from gen, a stream it shares (several Dropout layers may share one;
  /// it lives as long as they do); null: the process-wide default_generator(). p outside
  /// [0, 1] throws "dropout probability has to be between 0 and 1, but got p".
  explicit Dropout(DropoutOptions options = {}, std::shared_ptr<Generator> gen = nullptr);

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override;

  double p() const { return p_; }

 private:
  double p_;
  std::shared_ptr<Generator> gen_;  // null: default_generator()
};

}  // namespace minidl::nn
