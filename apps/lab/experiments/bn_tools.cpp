#include "experiments/bn_tools.hpp"

#include <set>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::lab {

std::shared_ptr<nn::Sequential> copy_model(const nn::Sequential& model, lesson::NormKind norm,
                                           const lesson::DeepNetOptions& options) {
  Generator gen(0);
  auto copy = lesson::deep_net(norm, options, gen);
  copy->load_state_dict(model.state_dict());
  return copy;
}

std::vector<nn::BatchNormBase*> batch_norms(const nn::Sequential& model) {
  std::vector<nn::BatchNormBase*> layers;
  for (size_t i = 0; i < model.size(); ++i)
    if (auto* bn = dynamic_cast<nn::BatchNormBase*>(model[i].get())) layers.push_back(bn);
  return layers;
}

Predictions predictions(const Tensor& logits, const Tensor& targets) {
  const Tensor predicted = argmax(logits, 1);  // (N)
  int64_t correct = 0;
  std::set<float> classes;
  for (int64_t i = 0; i < predicted.numel(); ++i) {
    correct += predicted.data()[i] == targets.data()[i];
    classes.insert(predicted.data()[i]);
  }
  return {double(correct) / double(targets.numel()), int(classes.size())};
}

BufferGuard::BufferGuard(const nn::Module& model) {
  for (const auto& [name, buffer] : model.named_buffers()) saved_.emplace_back(buffer, buffer.clone());
}

BufferGuard::~BufferGuard() {
  NoGradGuard no_grad;
  for (auto& [buffer, copy] : saved_) buffer.copy_(copy);
}

}  // namespace minidl::lab
