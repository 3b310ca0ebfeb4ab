#pragma once
// What the BatchNorm experiments (eval mode, running statistics) share.
#include <memory>
#include <utility>
#include <vector>

#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/sequential.hpp"
#include "training/digits_train.hpp"

namespace minidl::lab {

/// A new deep_net with the same options holding a copy of model's weights and buffers.
std::shared_ptr<nn::Sequential> copy_model(const nn::Sequential& model, lesson::NormKind norm,
                                           const lesson::DeepNetOptions& options);
/// The BatchNorm layers of a Sequential, in order.
std::vector<nn::BatchNormBase*> batch_norms(const nn::Sequential& model);
/// The fraction of argmax(logits) equal to targets, and how many classes were predicted.
struct Predictions {
  double accuracy;
  int classes;
};
Predictions predictions(const Tensor& logits, const Tensor& targets);

/// Copies every buffer of a module tree (BatchNorm's running statistics) and puts the copies
/// back when it goes out of scope: a probe in training mode leaves the model as it was.
class BufferGuard {
 public:
  explicit BufferGuard(const nn::Module& model);
  ~BufferGuard();
  BufferGuard(const BufferGuard&) = delete;
  BufferGuard& operator=(const BufferGuard&) = delete;

 private:
  std::vector<std::pair<Tensor, Tensor>> saved_;  // (the buffer, its copy)
};

}  // namespace minidl::lab
