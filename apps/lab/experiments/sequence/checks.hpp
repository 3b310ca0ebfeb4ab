#pragma once
// The sequence chapter's exact measurements, so the tests (tests/test_lab_sequence.cpp) check
// the same functions the experiments run.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/words.hpp"
#include "models/charlm_model.hpp"

namespace minidl::lab {

// ---- init_gradients ----
/// The Frobenius norm of each block's transformer.h.{i}.<weight> gradient ("mlp.c_proj.weight"),
/// block 0 first; throws naming the weight when it has no gradient (no backward yet).
std::vector<double> weight_gradient_norms(const charlm::CharTransformer& model, const std::string& weight);

// ---- leak ----
/// How far a freshly built model's logits move, in the mode given, on a batch of training
/// words drawn from seed: word 0's earlier positions when its last letter changes, and word
/// 0's positions when word 1's letters change (largest absolute move of a logit).
struct LeakMoves {
  double later_token = 0.0, batch_mate = 0.0;
};
LeakMoves measure_leak(const charlm::WordSplit& words, charlm::NormKind norm, bool train_mode, uint64_t seed);

// ---- batch_one ----
/// The largest difference, relative to 1 + the largest |logit|, between the logits step()
/// gives one token at a time through the cache and the last row of a full forward pass over
/// each prefix, over validation words drawn from seed, in the model's current mode.
double cache_difference(charlm::CharTransformer& model, const charlm::WordSplit& words, uint64_t seed);
/// The largest |train-mode - eval-mode| logit on a batch of validation words (the eval pass
/// first: a train-mode pass moves BatchNorm's running statistics); leaves the model in eval mode.
double mode_difference(charlm::CharTransformer& model, const charlm::WordSplit& words);
/// Whether train mode refuses batch size 1: the first generated token through step() (T = 1),
/// or else a two-token prefix through forward() (T = 2); and the refusal's message ("" when
/// it ran). Leaves the model in eval mode.
std::pair<bool, std::string> refused_in_training(charlm::CharTransformer& model, bool first_token);

}  // namespace minidl::lab
