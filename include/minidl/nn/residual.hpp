#pragma once
// Residual connections and the two standard residual blocks around an MLP:
//
//   Residual(f)        y = x + f(x)
//   PreNormBlock       y = x + mlp(norm(x))    a clean identity path from input to output
//   PostNormBlock      y = norm(x + mlp(x))    the original Transformer's placement
//   mlp                Linear(width, width * expansion) -> activation -> Linear(.., width)
//
// Their state_dict names are those of the PyTorch classes in docs/residual-blocks.md
// (Residual: "fn.*"; the blocks: "norm.*", then "mlp.0.*" and "mlp.2.*"), so a checkpoint
// loads into them with strict=True and back.
#include <cstdint>
#include <memory>
#include <string>

#include "minidl/nn/module.hpp"
#include "minidl/nn/sequential.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// y = x + fn(x); fn's output must have the input's shape (else an error naming both).
class Residual : public Module {
 public:
  /// Residual(nn::Linear(5, 5)) or from a shared pointer, as Sequential takes its children.
  template <typename M>
  requires ModuleArgument<M>
  explicit Residual(M&& fn) : Residual(hold(std::forward<M>(fn)), 0) {}

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Residual"; }
  const std::shared_ptr<Module>& fn() const { return fn_; }

 private:
  Residual(std::shared_ptr<Module> fn, int);
  template <typename M>
  static std::shared_ptr<Module> hold(M&& module) {
    if constexpr (detail::is_module_pointer<std::remove_cvref_t<M>>::value) return std::forward<M>(module);
    else return std::make_shared<std::remove_cvref_t<M>>(std::move(module));
  }
  std::shared_ptr<Module> fn_;
};

/// The options of mlp() and of the blocks, defaults beside each field.
struct BlockOptions {
  int64_t width = 64;               // features in and out
  int64_t expansion = 4;            // the hidden layer has width * expansion features
  std::string norm = "layer";       // the blocks' norm: "layer" (LayerNorm), "rms" (RMSNorm) or "dyt" (DyT)
  std::string activation = "gelu";  // "gelu", "tanh", "relu" or "silu"
  double dropout = 0.0;             // > 0: a Dropout(dropout) after the second Linear
  std::shared_ptr<Generator> dropout_generator = nullptr;  // the Dropout's stream; null: the default
};

/// Throws naming the field for a width or expansion below 1, an unknown norm or activation,
/// or a dropout outside [0, 1].
void check_block_options(const BlockOptions& options);

/// Sequential(Linear(width, hidden), activation, Linear(hidden, width)[, Dropout]), the
/// Linear layers drawn from gen in order.
std::shared_ptr<Sequential> mlp(const BlockOptions& options, Generator& gen = default_generator());

/// The norm a block uses: LayerNorm(width), RMSNorm(width) or DyT(width).
std::shared_ptr<Module> block_norm(const BlockOptions& options);

/// y = x + mlp(norm(x)); children "norm" then "mlp".
class PreNormBlock : public Module {
 public:
  explicit PreNormBlock(const BlockOptions& options = {}, Generator& gen = default_generator());
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "PreNormBlock"; }

 private:
  std::shared_ptr<Module> norm_;
  std::shared_ptr<Sequential> mlp_;
};

/// y = norm(x + mlp(x)); children "norm" then "mlp".
class PostNormBlock : public Module {
 public:
  explicit PostNormBlock(const BlockOptions& options = {}, Generator& gen = default_generator());
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "PostNormBlock"; }

 private:
  std::shared_ptr<Module> norm_;
  std::shared_ptr<Sequential> mlp_;
};

}  // namespace minidl::nn
