#pragma once
// Which kernels compute a convolution: im2col + sgemm (any geometry, the reference path) or
// Winograd F(2x2, 3x3) (kernels/conv/winograd.hpp) where it applies and was measured faster.
#include "kernels/conv/conv2d.hpp"

namespace minidl::kernels {

enum class Conv2dPath { Im2col, Winograd };

/// The measured rule: Winograd where it applies, with at least kWinogradMinChannels input and
/// output channels and outputs of at least kWinogradMinSide x kWinogradMinSide, where it was
/// faster under both OpenBLAS kernels (docs/cnn.md, "Which path, measured").
constexpr int64_t kWinogradMinChannels = 8;
constexpr int64_t kWinogradMinSide = 16;
bool winograd_pays(const Conv2dGeometry& g);

/// The path conv2d takes for g, by that rule.
Conv2dPath conv2d_path(const Conv2dGeometry& g);

}  // namespace minidl::kernels
