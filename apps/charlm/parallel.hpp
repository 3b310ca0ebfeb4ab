#pragma once
// Data-parallel training for train_run (charlm --distributed): what a run asks of the
// processes it trains with. In one process there is none (RunOptions::parallel is null);
// distributed.cpp implements it on minidl::distributed when built with MPI.
//
// Every rank draws the same global batch (the same seed, the same sampler) and takes its
// contiguous slice of the batch's words (lesson::shard_of), padded to its own longest word.
#include <memory>
#include <span>

#include "model.hpp"

namespace minidl::charlm {

class DataParallel {
 public:
  virtual ~DataParallel() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// Called once per run before the optimizer exists: rank 0's parameters and buffers on
  /// every rank; forward below trains this model.
  virtual void prepare(const std::shared_ptr<CharTransformer>& model) = 0;
  /// The model's training forward on this rank's shard (rank 0's buffers first, as
  /// PyTorch's broadcast_buffers): logits (B, T, V).
  virtual Tensor forward(const Tensor& idx, const TokenMask& mask) = 0;
  /// After backward: every gradient averaged over the ranks.
  virtual void reduce_gradients() = 0;
  /// Each value replaced by its sum over the ranks, on every rank.
  virtual void sum(std::span<double> values) = 0;
  /// Rank 0's buffers (BatchNorm's running statistics) on every rank, so that every rank
  /// evaluates the model rank 0 saves.
  virtual void share_buffers() = 0;
};

}  // namespace minidl::charlm
