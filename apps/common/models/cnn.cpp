#include "models/cnn.hpp"

#include "minidl/nn/activation.hpp"
#include "minidl/nn/conv.hpp"
#include "minidl/nn/flatten.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/norm/dyt.hpp"
#include "minidl/nn/norm/group_norm.hpp"
#include "minidl/nn/pooling.hpp"

namespace minidl::lesson {

namespace {

std::shared_ptr<nn::Module> make_norm(NormKind norm, int64_t channels, int64_t groups) {
  switch (norm) {
    case NormKind::Batch:
      return std::make_shared<nn::BatchNorm2d>(channels);
    case NormKind::Group:
      return std::make_shared<nn::GroupNorm>(groups, channels);
    case NormKind::Layer:
      return std::make_shared<nn::GroupNorm>(1, channels);
    case NormKind::Instance:
      return std::make_shared<nn::GroupNorm>(channels, channels);
    case NormKind::DyT:  // channels on dim 1 of (N, C, H, W)
      return std::make_shared<nn::DyT>(nn::DyTOptions{.normalized_shape = channels, .channels_last = false});
    case NormKind::None:
    case NormKind::RMS:
    case NormKind::BatchMasked:
      break;
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<nn::Sequential> cnn_net(NormKind norm, const DeepNetOptions& options, Generator& gen) {
  const int64_t c1 = kCnnChannels, c2 = 2 * kCnnChannels;
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Unflatten>(1, Shape{1, 8, 8}));
  const auto block = [&](nn::Conv2dOptions conv) {
    const int64_t channels = conv.out_channels;
    model->push_back(std::make_shared<nn::Conv2d>(conv, gen));
    if (norm != NormKind::None) model->push_back(make_norm(norm, channels, options.groups));
    model->push_back(std::make_shared<nn::ReLU>());
  };
  block(nn::Conv2dOptions(1, c1, 3).padding(1));
  block(nn::Conv2dOptions(c1, c2, 3).stride(2).padding(1));
  block(nn::Conv2dOptions(c2, c2, 3).padding(1));
  model->push_back(std::make_shared<nn::AdaptiveAvgPool2d>(1));
  model->push_back(std::make_shared<nn::Flatten>());
  model->push_back(std::make_shared<nn::Linear>(c2, options.classes, gen));
  return model;
}

}  // namespace minidl::lesson
