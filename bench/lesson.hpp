#pragma once
// The lesson's experiment for the benchmarks, from the public API alone: the digits split,
// the deep tanh net, the digits' CNN and the training loop, as apps/digits runs them (the
// same init order, batches and evaluations, so the same step losses), without the program's
// options, checks and outputs. The benchmarks depend on the library and on the programs'
// norm names (apps/common/models/norm_kind.hpp), not on the programs' training code.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "minidl/minidl.hpp"
#include "models/norm_kind.hpp"

namespace minidl::bench {

/// The lesson's split of data/digits.csv: pixels / 16 as float, labels as float.
struct LessonData {
  Tensor X_train, y_train;  // (1437, 64), (1437)
  Tensor X_val, y_val;      // (360, 64), (360)
};

/// Reads digits.csv, digits_train_indices.txt and digits_test_indices.txt from dir; a file
/// that cannot be opened is a UsageError naming it.
LessonData load_lesson_data(const std::string& dir);

using apps::NormKind;
constexpr NormKind kLessonNorms[] = {NormKind::None, NormKind::Batch, NormKind::Layer, NormKind::Group};
/// "none", "batch", "layer" or "group"; UsageError otherwise.
inline NormKind parse_norm(const std::string& name) { return apps::parse_norm(name, kLessonNorms); }

/// 8 x [Linear(n_in, 64), norm(64) or nothing, Tanh], Linear(64, 10); Linear has no bias
/// before a norm. GroupNorm is not one of the lesson's MLPs.
std::shared_ptr<nn::Sequential> lesson_net(NormKind norm, Generator& gen);
/// The digits' CNN: (N, 64) as 1x8x8, conv 1 -> 16, 16 -> 32 stride 2, 32 -> 32 (3x3, padding
/// 1), each with its norm (BatchNorm2d, GroupNorm(8, C), GroupNorm(1, C) for layer) and ReLU,
/// global average pooling, Linear(32, 10).
std::shared_ptr<nn::Sequential> lesson_cnn(NormKind norm, Generator& gen);

struct LessonRun {
  NormKind norm = NormKind::None;
  int64_t batch_size = 64;
  int64_t epochs = 5;
  double lr = 0.05;         // SGD without momentum
  uint64_t seed = 0;        // seeds the init and the shuffling
  int64_t stats_every = 0;  // > 0: a StatsRecorder on every tanh and weight, every N-th step
};

/// Trains lesson_net(norm) with SGD on shuffled batches, evaluating on the
/// validation split after each epoch and on both splits at the end; returns each step's loss.
std::vector<float> train_lesson(const LessonData& data, const LessonRun& run);

}  // namespace minidl::bench
