#include "minidl/nn/residual.hpp"

#include "minidl/nn/activation.hpp"
#include "minidl/nn/dropout.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/dyt.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/ops/activation.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {
namespace {

std::shared_ptr<Module> make_activation(const std::string& name) {
  if (name == "gelu") return std::make_shared<GELU>();
  if (name == "tanh") return std::make_shared<Tanh>();
  if (name == "relu") return std::make_shared<ReLU>();
  if (name == "silu") return std::make_shared<SiLU>();
  throw Error(cat("BlockOptions: unknown activation \"", name, "\": choose from gelu, tanh, relu, silu"));
}

}  // namespace

Residual::Residual(std::shared_ptr<Module> fn, int) : fn_(std::move(fn)) {
  if (!fn_) throw Error("Residual: expected a module, got a null pointer");
  register_module("fn", fn_);
}

Tensor Residual::forward(const Tensor& input) {
  Tensor out = (*fn_)(input);
  if (out.shape() != input.shape())
    throw Error(cat("Residual: the wrapped ", fn_->type_name(), " maps input of shape ", to_string(input.shape()),
                    " to shape ", to_string(out.shape()), "; a residual connection needs the same shape"));
  return input + out;
}

void check_block_options(const BlockOptions& o) {
  if (o.width < 1) throw Error(cat("BlockOptions: width must be at least 1, got ", o.width));
  if (o.expansion < 1) throw Error(cat("BlockOptions: expansion must be at least 1, got ", o.expansion));
  if (o.norm != "layer" && o.norm != "rms" && o.norm != "dyt")
    throw Error(cat("BlockOptions: unknown norm \"", o.norm, "\": choose from layer, rms, dyt"));
  (void)make_activation(o.activation);
  check_dropout_probability(o.dropout);
}

std::shared_ptr<Sequential> mlp(const BlockOptions& o, Generator& gen) {
  check_block_options(o);
  const int64_t hidden = o.width * o.expansion;
  auto seq = std::make_shared<Sequential>();
  seq->push_back(std::make_shared<Linear>(o.width, hidden, gen));
  seq->push_back(make_activation(o.activation));
  seq->push_back(std::make_shared<Linear>(hidden, o.width, gen));
  if (o.dropout > 0.0) seq->push_back(std::make_shared<Dropout>(o.dropout, o.dropout_generator));
  return seq;
}

std::shared_ptr<Module> block_norm(const BlockOptions& o) {
  check_block_options(o);
  if (o.norm == "rms") return std::make_shared<RMSNorm>(o.width);
  if (o.norm == "dyt") return std::make_shared<DyT>(o.width);
  return std::make_shared<LayerNorm>(o.width);
}

PreNormBlock::PreNormBlock(const BlockOptions& options, Generator& gen)
    : norm_(register_module("norm", block_norm(options))), mlp_(register_module("mlp", mlp(options, gen))) {}

Tensor PreNormBlock::forward(const Tensor& input) { return input + (*mlp_)((*norm_)(input)); }

PostNormBlock::PostNormBlock(const BlockOptions& options, Generator& gen)
    : norm_(register_module("norm", block_norm(options))), mlp_(register_module("mlp", mlp(options, gen))) {}

Tensor PostNormBlock::forward(const Tensor& input) { return (*norm_)(input + (*mlp_)(input)); }

}  // namespace minidl::nn
