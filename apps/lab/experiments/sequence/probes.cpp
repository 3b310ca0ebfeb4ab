#include "probes.hpp"

#include <algorithm>
#include <cmath>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lab {

std::string quick_note(const Settings& settings, const std::string& cuts) {
  return settings.quick ? cat("; --quick: ", cuts, ", which proves the code runs, not the claim.") : std::string(".");
}

std::shared_ptr<charlm::CharTransformer> fresh_model(const charlm::ModelOptions& options, uint64_t seed) {
  Generator init(seed);
  return std::make_shared<charlm::CharTransformer>(options, init);
}

charlm::Batch training_words(const charlm::WordSplit& words, int64_t size, uint64_t seed) {
  // Kept apart from the init's stream, as train_run keeps its batch order apart.
  Generator gen(seed ^ 0x77a1d5ULL);
  std::vector<int64_t> picks;
  for (int64_t i = 0; i < size; ++i) picks.push_back(words.train[size_t(gen.below(uint64_t(words.train.size())))]);
  return charlm::make_batch(words.words, picks);
}

charlm::WordSplit with_validation_words(const charlm::WordSplit& words, size_t count) {
  charlm::WordSplit copy = words;
  copy.val.resize(std::min(count, copy.val.size()));
  return copy;
}

Tensor words_loss(charlm::CharTransformer& model, const charlm::Batch& batch) {
  const Tensor logits = model.forward(batch.x, batch.mask);  // (B, T, V)
  return cross_entropy(logits.reshape({-1, charlm::kVocabSize}), batch.y, {.ignore_index = -1});
}

ModeLosses mode_losses(charlm::CharTransformer& model, const charlm::WordSplit& words, int64_t size, int64_t count,
                       uint64_t seed) {
  std::vector<charlm::Batch> batches;
  for (int64_t k = 0; k < count; ++k) batches.push_back(training_words(words, size, 1000 * seed + 7 + uint64_t(k)));
  NoGradGuard no_grad;
  auto mean_loss = [&](bool train_mode) {
    model.train(train_mode);
    double sum = 0.0;
    for (const charlm::Batch& b : batches) sum += words_loss(model, b).item();
    return sum / double(batches.size());
  };
  const double eval_mode = mean_loss(false);
  return {.train_mode = mean_loss(true), .eval_mode = eval_mode};
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    throw Error(
        cat("max_abs_difference: expected equal shapes, got ", to_string(a.shape()), " and ", to_string(b.shape())));
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  double d = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double diff = std::fabs(double(x[i]) - double(y[i]));
    if (std::isnan(diff)) return diff;  // a NaN on either side is no agreement
    d = std::max(d, diff);
  }
  return d;
}

}  // namespace minidl::lab
