#include "minidl/optim/optimizer.hpp"

#include <unordered_map>

#include "minidl/tensor/error.hpp"
#include "state_checks.hpp"

namespace minidl::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  if (params_.empty()) throw UsageError("optimizer got an empty parameter list");
  std::unordered_map<const TensorImpl*, size_t> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined()) throw Error(cat("optimizer: parameter ", i, " is an undefined tensor"));
    if (!params_[i].is_leaf())
      throw Error(cat("optimizer: can't optimize a non-leaf tensor (parameter ", i, " of shape ",
                      to_string(params_[i].shape()), ")"));
    // The same tensor twice would be stepped twice.
    if (auto [at, fresh] = seen.emplace(params_[i].impl(), i); !fresh)
      throw Error(cat("optimizer: parameter ", i, " is the same tensor as parameter ", at->second));
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) {
    if (set_to_none) p.zero_grad();
    else if (Tensor g = p.grad(); g.defined()) g.fill_(0.0f);
  }
}

void Optimizer::add_initial_lr(OptimizerState& state) const {
  if (initial_lr_) state.param_group["initial_lr"] = *initial_lr_;
}

std::optional<double> Optimizer::loaded_initial_lr(const OptimizerState& state, const char* who) const {
  if (!state.param_group.count("initial_lr")) return std::nullopt;
  return detail::number_option(state, "initial_lr", 0.0, who);
}

}  // namespace minidl::optim
