#pragma once
// The lesson's model: depth blocks of [Linear, norm, Tanh] and a final Linear, built as an
// nn::Sequential so its state_dict names are PyTorch's ("0.weight", "1.running_mean", ...).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "minidl/nn/sequential.hpp"
#include "minidl/tensor/generator.hpp"
#include "models/norm_kind.hpp"

namespace minidl::lesson {

/// The norm layer after each Linear (before its Tanh), or in the CNN after each Conv2d.
/// Instance exists in the CNN only; BatchMasked is charlm's.
using apps::NormKind;
using apps::short_name;
constexpr NormKind kNorms[] = {NormKind::None,  NormKind::Batch,    NormKind::Layer, NormKind::RMS,
                               NormKind::Group, NormKind::Instance, NormKind::DyT};

/// The name the lesson prints: "no normalization", "BatchNorm1d", "LayerNorm", "RMSNorm", "GroupNorm",
/// "GroupNorm(C, C)" (instance), "DyT"; the CNN's other names: display_name(norm, arch) in arch.hpp.
std::string display_name(NormKind norm);
/// The NormKind of a short name of kNorms; throws UsageError listing them for any other.
inline NormKind parse_norm(const std::string& name) { return apps::parse_norm(name, kNorms); }

struct DeepNetOptions {
  int64_t depth = 8;         // Linear + norm + Tanh blocks
  int64_t width = 64;        // features of each hidden layer
  int64_t groups = 8;        // GroupNorm's num_groups (must divide width)
  int64_t in_features = 64;  // the digits' 8x8 pixels
  int64_t classes = 10;
  // The lab's knobs; the defaults are the lesson's network.
  double init_scale = 1.0;                  // multiplies every Linear's initial weight (not its bias)
  std::optional<double> bn_momentum = 0.1;  // BatchNorm1d's momentum; nullopt = cumulative average
  bool bias_before_norm = true;             // false: the Linear before each norm layer has no bias
};

/// The lesson's deep_net(norm), its Linear layers drawn from gen in layer order, as
/// torch.manual_seed(s) then deep_net(norm) draws them from the global generator. The options
/// are trusted (the digits program checks its own, the lab writes valid ones): norm is not
/// Instance, sizes are at least 1, GroupNorm's groups divide width.
std::shared_ptr<nn::Sequential> deep_net(NormKind norm, const DeepNetOptions& options = {},
                                         Generator& gen = default_generator());

}  // namespace minidl::lesson
