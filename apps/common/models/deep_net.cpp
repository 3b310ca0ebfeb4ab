#include "lesson/deep_net.hpp"

#include <array>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/norm/group_norm.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

namespace {

struct NormNames {
  NormKind norm;
  const char* short_name;
  const char* display_name;
};

constexpr std::array<NormNames, 6> kNorms{{{NormKind::None, "none", "no normalization"},
                                           {NormKind::Batch, "batch", "BatchNorm1d"},
                                           {NormKind::Layer, "layer", "LayerNorm"},
                                           {NormKind::RMS, "rms", "RMSNorm"},
                                           {NormKind::Group, "group", "GroupNorm"},
                                           {NormKind::Instance, "instance", "GroupNorm(C, C)"}}};

const NormNames& names_of(NormKind norm) { return kNorms[size_t(norm)]; }

std::shared_ptr<nn::Module> make_norm(NormKind norm, const DeepNetOptions& options) {
  switch (norm) {
    case NormKind::Batch:
      return std::make_shared<nn::BatchNorm1d>(
          nn::BatchNormOptions{.num_features = options.width, .momentum = options.bn_momentum});
    case NormKind::Layer:
      return std::make_shared<nn::LayerNorm>(options.width);
    case NormKind::RMS:
      return std::make_shared<nn::RMSNorm>(options.width);
    case NormKind::Group:
      return std::make_shared<nn::GroupNorm>(options.groups, options.width);
    case NormKind::None:
    case NormKind::Instance:
      break;
  }
  return nullptr;
}

void scale_weight(nn::Linear& linear, double scale) {
  if (scale == 1.0) return;
  float* w = linear.weight.data();
  for (int64_t i = 0; i < linear.weight.numel(); ++i) w[i] = float(double(w[i]) * scale);
}

}  // namespace

std::string short_name(NormKind norm) { return names_of(norm).short_name; }
std::string display_name(NormKind norm) { return names_of(norm).display_name; }

NormKind parse_norm(const std::string& name) {
  for (const NormNames& n : kNorms)
    if (name == n.short_name) return n.norm;
  throw UsageError(cat("unknown norm \"", name, "\": choose from none, batch, layer, rms, group, instance"));
}

std::shared_ptr<nn::Sequential> deep_net(NormKind norm, const DeepNetOptions& options, Generator& gen) {
  auto model = std::make_shared<nn::Sequential>();
  int64_t n_in = options.in_features;
  for (int64_t block = 0; block < options.depth; ++block) {
    const bool bias = norm == NormKind::None || options.bias_before_norm;
    auto linear = std::make_shared<nn::Linear>(nn::LinearOptions(n_in, options.width).bias(bias), gen);
    scale_weight(*linear, options.init_scale);
    model->push_back(linear);
    if (norm != NormKind::None) model->push_back(make_norm(norm, options));
    model->push_back(std::make_shared<nn::Tanh>());
    n_in = options.width;
  }
  auto last = std::make_shared<nn::Linear>(options.width, options.classes, gen);
  scale_weight(*last, options.init_scale);
  model->push_back(last);
  return model;
}

}  // namespace minidl::lesson
