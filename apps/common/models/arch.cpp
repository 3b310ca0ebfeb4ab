#include "models/arch.hpp"

#include <array>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/init.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/nn/residual.hpp"
#include "models/cnn.hpp"

namespace minidl::lesson {
namespace {

constexpr std::array<const char*, 4> kArchNames{"mlp", "resmlp-pre", "resmlp-post", "cnn"};
constexpr std::array<const char*, 3> kInitNames{"pytorch", "xavier", "kaiming"};

nn::BlockOptions block_options(NormKind norm, const DeepNetOptions& net, const ModelOptions& model,
                               std::shared_ptr<Generator> dropout_gen) {
  return {.width = net.width,
          .expansion = model.expansion,
          .norm = short_name(norm),
          .activation = "gelu",
          .dropout = model.dropout,
          .dropout_generator = std::move(dropout_gen)};
}

std::shared_ptr<nn::Sequential> res_mlp(NormKind norm, const DeepNetOptions& net, const ModelOptions& model,
                                        Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  const nn::BlockOptions block = block_options(norm, net, model, std::move(dropout_gen));
  auto seq = std::make_shared<nn::Sequential>();
  seq->push_back(std::make_shared<nn::Linear>(net.in_features, net.width, gen));
  for (int64_t b = 0; b < model.blocks; ++b) {
    if (model.arch == Arch::ResMLPPre) seq->push_back(std::make_shared<nn::PreNormBlock>(block, gen));
    else seq->push_back(std::make_shared<nn::PostNormBlock>(block, gen));
  }
  // Pre-norm leaves the residual stream unnormalized: one norm before the head, as pre-norm
  // Transformers end with a final LayerNorm.
  if (model.arch == Arch::ResMLPPre) seq->push_back(nn::block_norm(block));
  seq->push_back(std::make_shared<nn::Linear>(net.width, net.classes, gen));
  return seq;
}

// The nonlinearity whose gain a Linear followed (norm layers skipped) by `next` takes:
// GELU and SiLU as ReLU; "linear" (gain 1) when nothing or a block follows.
std::string nonlinearity_after(const nn::Module* next) {
  const std::string type = next ? next->type_name() : "";
  if (type == "Tanh") return "tanh";
  if (type == "ReLU" || type == "GELU" || type == "SiLU") return "relu";
  return "linear";
}

bool is_norm(const nn::Module& m) {
  const std::string type = m.type_name();
  return type == "LayerNorm" || type == "RMSNorm" || type == "BatchNorm1d" || type == "GroupNorm";
}

void init_linear(nn::Linear& linear, InitScheme init, const std::string& nonlinearity, Generator& gen) {
  if (init == InitScheme::Xavier) nn::init::xavier_uniform_(linear.weight, nn::init::calculate_gain(nonlinearity), gen);
  else nn::init::kaiming_normal_(linear.weight, 0.0, "fan_in", nonlinearity, gen);
  if (linear.bias.defined()) nn::init::zeros_(linear.bias);
}

}  // namespace

std::string arch_name(Arch arch) { return kArchNames[size_t(arch)]; }

std::string init_name(InitScheme init) { return kInitNames[size_t(init)]; }

std::string display_name(NormKind norm, Arch arch) {
  if (arch == Arch::CNN && norm == NormKind::Batch) return "BatchNorm2d";
  if (arch == Arch::CNN && norm == NormKind::Layer) return "GroupNorm(1, C)";
  return display_name(norm);
}

std::shared_ptr<nn::Sequential> build_model(NormKind norm, const DeepNetOptions& net, const ModelOptions& model,
                                            Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  std::shared_ptr<nn::Sequential> seq;
  switch (model.arch) {
    case Arch::MLP:
      seq = deep_net(norm, net, gen);
      break;
    case Arch::CNN:
      seq = cnn_net(norm, net, gen);
      break;
    case Arch::ResMLPPre:
    case Arch::ResMLPPost:
      seq = res_mlp(norm, net, model, gen, std::move(dropout_gen));
      break;
  }
  apply_init(*seq, model.init, gen);
  return seq;
}

void apply_init(nn::Module& module, InitScheme init, Generator& gen) {
  if (init == InitScheme::PyTorch) return;
  const auto children = module.named_children();
  for (size_t i = 0; i < children.size(); ++i) {
    nn::Module& child = *children[i].second;
    if (auto* linear = dynamic_cast<nn::Linear*>(&child)) {
      size_t j = i + 1;
      while (j < children.size() && is_norm(*children[j].second)) ++j;
      init_linear(*linear, init, nonlinearity_after(j < children.size() ? children[j].second.get() : nullptr), gen);
    } else {
      apply_init(child, init, gen);
    }
  }
}

}  // namespace minidl::lesson
