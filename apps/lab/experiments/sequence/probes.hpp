#pragma once
// What the sequence chapter's exact probes share: a freshly built charlm model, a batch of
// training words drawn from a seed, its loss, and the largest difference of two outputs.
#include <cstdint>
#include <memory>
#include <string>

#include "data/words.hpp"
#include "lab.hpp"
#include "models/charlm_model.hpp"

namespace minidl::lab {

/// The end of a set-up: "." or, with --quick, what it cuts ("; --quick: one seed and 20 steps,
/// which proves the code runs, not the claim.").
std::string quick_note(const Settings& settings, const std::string& cuts);

/// charlm's model with these options, its parameters drawn from seed as train_run draws them.
std::shared_ptr<charlm::CharTransformer> fresh_model(const charlm::ModelOptions& options, uint64_t seed);

/// `size` words of the training split drawn (with replacement) from seed, padded as charlm pads.
charlm::Batch training_words(const charlm::WordSplit& words, int64_t size, uint64_t seed);

/// A copy of words with only the first `count` validation words: for runs whose validation loss
/// is not what is measured (train_run always evaluates at its end) or only proves code paths.
charlm::WordSplit with_validation_words(const charlm::WordSplit& words, size_t count);

/// The mean cross-entropy over the batch's real tokens, as charlm's training computes it (the
/// model's mode decides its norms' statistics).
Tensor words_loss(charlm::CharTransformer& model, const charlm::Batch& batch);

/// The mean loss on `count` fresh training batches of `size` words (batch k drawn from
/// 1000 seed + 7 + k) in train mode, as training reports it, and in eval mode: the eval pass
/// first, as a train-mode pass moves BatchNorm's running statistics. Leaves the model in train mode.
struct ModeLosses {
  double train_mode = 0.0, eval_mode = 0.0;
};
ModeLosses mode_losses(charlm::CharTransformer& model, const charlm::WordSplit& words, int64_t size, int64_t count,
                       uint64_t seed);

/// max |a - b| over all elements (NaN where either holds a NaN); throws naming both shapes when they differ.
double max_abs_difference(const Tensor& a, const Tensor& b);

}  // namespace minidl::lab
