#pragma once
// A model summary in the manner of torchinfo's basic table: one row per module in the tree
// (its child name and type, indented by depth) with the parameters it holds itself, then
// the totals.
//
//   ========================================================
//   Layer (type)                                     Param #
//   ========================================================
//   Sequential                                            --
//   ├─0 (Linear)                                       4,160
//   ├─1 (PreNormBlock)                                    --
//   │    └─norm (LayerNorm)                              128
//   ...
//   ========================================================
//   Total params: 42,314
//   Trainable params: 42,314
//   Non-trainable params: 0
//   ========================================================
#include <cstdint>
#include <string>

#include "minidl/nn/module.hpp"

namespace minidl::nn {

/// The parameters module holds itself, not its children's ("--" in the table when 0).
int64_t own_parameter_count(const Module& module);

/// The table above; a tensor reached twice (tied weights) counts once in the totals.
std::string summary(const Module& model);

}  // namespace minidl::nn
