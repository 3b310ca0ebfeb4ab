#pragma once
// The digits' CNN, an nn::Sequential so its state_dict names are those of the same
// nn.Sequential in PyTorch (scripts/check_checkpoints_torch.py builds it):
//
//   Unflatten(1, (1, 8, 8))                              (N, 64) -> (N, 1, 8, 8)
//   Conv2d(1, 16, 3, padding=1)            norm(16) ReLU  -> (N, 16, 8, 8)
//   Conv2d(16, 32, 3, stride=2, padding=1) norm(32) ReLU  -> (N, 32, 4, 4)
//   Conv2d(32, 32, 3, padding=1)           norm(32) ReLU  -> (N, 32, 4, 4)
//   AdaptiveAvgPool2d(1), Flatten()                       -> (N, 32)
//   Linear(32, 10)                                        -> (N, 10)
//
// norm: none, BatchNorm2d (batch), GroupNorm(groups, C) (group), GroupNorm(1, C) (layer:
// LayerNorm over (C, H, W), without its per-position affine) or GroupNorm(C, C) (instance).
// With a norm the layers sit at 0..12 (convolutions 1, 4, 7; norms 2, 5, 8; Linear 12),
// without at 0..9 (convolutions 1, 3, 5; Linear 9).
#include <memory>

#include "minidl/nn/sequential.hpp"
#include "models/deep_net.hpp"

namespace minidl::lesson {

/// The channels of the CNN's first convolution (then twice as many): --groups must divide it.
inline constexpr int64_t kCnnChannels = 16;

/// The CNN above, its Conv2d and Linear layers drawn from gen in layer order (weight then
/// bias), as torch.manual_seed(s) then building it draws them in PyTorch. The options are
/// trusted: norm is not RMS, GroupNorm's groups divide kCnnChannels.
std::shared_ptr<nn::Sequential> cnn_net(NormKind norm, const DeepNetOptions& options, Generator& gen);

}  // namespace minidl::lesson
