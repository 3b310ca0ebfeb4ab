#pragma once
// The one place that turns --arch into a network: every caller (training, --init checks,
// the size check) builds through build_model, so a new architecture is one case here.
#include <memory>
#include <string>

#include "lesson/deep_net.hpp"
#include "minidl/nn/sequential.hpp"

namespace minidl::lesson {

/// deep_net (Arch::MLP) or cnn_net (Arch::CNN) of options.arch.
std::shared_ptr<nn::Sequential> build_model(NormKind norm, const DeepNetOptions& options,
                                            Generator& gen = default_generator());

/// Throws UsageError naming the option when build_model(norm, options) has no such network.
void check_model_options(NormKind norm, const DeepNetOptions& options);

/// How messages name the network: "deep_net(layer)", "cnn(batch)".
std::string model_label(NormKind norm, const DeepNetOptions& options);

}  // namespace minidl::lesson
