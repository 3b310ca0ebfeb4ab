#pragma once
// Which kernels compute a convolution: im2col + sgemm (any geometry, the reference path) or
// Winograd F(2x2, 3x3) (kernels/conv/winograd.hpp) where it applies and was measured faster.
#include "kernels/conv/conv2d.hpp"

namespace minidl::kernels {

enum class Conv2dPath { Im2col, Winograd };

/// The measured rule (docs/cnn.md, `bench_conv --what paths`): Winograd where it applies, with
/// at least kWinogradMinChannels input and output channels and outputs of at least
/// kWinogradMinSide x kWinogradMinSide. There it took 1.25-2.25x less time than im2col + sgemm
/// under both OpenBLAS kernels; on 8x8 and smaller it was slower as often as faster (the
/// digits' conv3, 32 -> 32 on 4x4: 0.75-0.84x), and on 3 channels even at 32x32 (1.0-1.4x).
constexpr int64_t kWinogradMinChannels = 8;
constexpr int64_t kWinogradMinSide = 16;
bool winograd_pays(const Conv2dGeometry& g);

/// The path conv2d takes for g, by that rule.
Conv2dPath conv2d_path(const Conv2dGeometry& g);

}  // namespace minidl::kernels
