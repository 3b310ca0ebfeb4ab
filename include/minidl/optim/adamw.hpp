#pragma once
// AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW: Adam with decoupled weight decay,
// p *= 1 - lr weight_decay before the Adam step.
#include <vector>

#include "minidl/optim/adam.hpp"

namespace minidl::optim {

/// Adam's options with AdamW's default weight_decay (PyTorch: 1e-2 here, 0 for Adam).
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;  // betas=(0.9, 0.999)
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
  AdamOptions as_adam() const { return {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize}; }
};

class AdamW : public Adam {
 public:
  /// Throws as Adam's constructor does, naming AdamW.
  AdamW(std::vector<Tensor> params, AdamWOptions options = {}) : Adam(std::move(params), options.as_adam(), true) {}
};

}  // namespace minidl::optim
