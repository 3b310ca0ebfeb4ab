#include "models/deep_net.hpp"

#include <array>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/norm/dyt.hpp"
#include "minidl/nn/norm/group_norm.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

namespace {

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
    case NormKind::DyT:
      return std::make_shared<nn::DyT>(options.width);
    default:  // None adds no layer; Instance is the CNN's, BatchMasked charlm's
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

std::string display_name(NormKind norm) {
  constexpr std::array<const char*, 8> kNames{"no normalization",
                                              "BatchNorm1d",
                                              "LayerNorm",
                                              "RMSNorm",
                                              "GroupNorm",
                                              "GroupNorm(C, C)",
                                              "BatchNorm1d over real positions",
                                              "DyT"};
  return kNames.at(size_t(norm));
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
