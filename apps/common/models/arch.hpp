#pragma once
// The model a run trains, chosen by --arch: the lesson's deep tanh MLP (deep_net.hpp), a
// residual MLP stack with the norm before or after each block, or a small CNN (cnn.hpp), and
// how its Linear layers are initialized (--init). One dispatch, build_model(), so every caller builds the same.
//
//   resmlp-pre:  Linear(in, width), blocks x PreNormBlock, norm(width), Linear(width, classes)
//   resmlp-post: Linear(in, width), blocks x PostNormBlock, Linear(width, classes)
//
// each block's MLP being Linear(width, expansion * width) -> GELU -> Linear(.., width)
// [-> Dropout]. All are nn::Sequential, so state_dict names are those of the PyTorch
// equivalents in docs/residual-blocks.md ("1.norm.weight", "1.mlp.0.weight", ...).
#include <cstdint>
#include <memory>
#include <string>

#include "minidl/nn/sequential.hpp"
#include "minidl/tensor/generator.hpp"
#include "models/deep_net.hpp"

namespace minidl::lesson {

enum class Arch { MLP, ResMLPPre, ResMLPPost, CNN };
/// How the weights are drawn after the model is built.
enum class InitScheme { PyTorch, Xavier, Kaiming };

/// "mlp", "resmlp-pre", "resmlp-post", "cnn".
std::string arch_name(Arch arch);
/// "pytorch", "xavier", "kaiming".
std::string init_name(InitScheme init);
/// The name the lesson prints for norm in arch: display_name(norm), but the CNN's
/// "BatchNorm2d" (batch) and "GroupNorm(1, C)" (layer).
std::string display_name(NormKind norm, Arch arch);

struct ModelOptions {
  Arch arch = Arch::MLP;
  int64_t blocks = 4;     // residual blocks (resmlp archs)
  int64_t expansion = 4;  // a block's hidden layer has expansion * width features
  double dropout = 0.0;   // a Dropout(dropout) at the end of each block's MLP (resmlp archs)
  InitScheme init = InitScheme::PyTorch;
};

/// The model of norm, net and model, its Linear layers drawn from gen in layer order (for
/// --init xavier and kaiming redrawn after, in state_dict order); the Dropout layers draw
/// from dropout_gen (null: the default generator). The options are trusted (deep_net's and
/// cnn_net's; a resmlp arch takes layer or rms, the cnn --init pytorch).
std::shared_ptr<nn::Sequential> build_model(NormKind norm, const DeepNetOptions& net, const ModelOptions& model,
                                            Generator& gen, std::shared_ptr<Generator> dropout_gen = nullptr);

/// Re-initializes every Linear in module's tree, in state_dict order: "xavier"
/// xavier_uniform_(w, gain), "kaiming" kaiming_normal_(w, mode fan_in) with that
/// nonlinearity, the bias zeroed. The nonlinearity is the activation after the Linear in its
/// Sequential (norm layers skipped): tanh (gain 5/3), ReLU (sqrt 2), GELU and SiLU taken as
/// ReLU, nothing or a block (the stem, a block's last Linear, the logits) linear (1).
/// "pytorch" leaves the model as built.
void apply_init(nn::Module& module, InitScheme init, Generator& gen);

}  // namespace minidl::lesson
