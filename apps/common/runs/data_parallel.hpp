#pragma once
// Data-parallel training (digits and charlm --distributed): what a run asks of the processes
// it trains with. In one process there is none (the run's `parallel` is null);
// runs/distributed.cpp implements it on minidl::distributed when built with MPI.
//
// Each step every rank takes its contiguous slice of the same global batch (the loader's
// permutation is the same on every rank: the same seed), so N ranks see the batches one
// process sees at that global batch size, in the same order.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "minidl/nn/module.hpp"

namespace minidl::apps {

class DataParallel {
 public:
  virtual ~DataParallel() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// The model this rank trains, called once per run before the optimizer exists: its
  /// BatchNorm layers turned into SyncBatchNorm when asked (--sync-bn on a Sequential), rank
  /// 0's parameters and buffers on every rank. forward below trains it.
  virtual std::shared_ptr<nn::Module> prepare(std::shared_ptr<nn::Module> model) = 0;
  /// The model's training forward on this rank's shard (rank 0's buffers first, as
  /// PyTorch's broadcast_buffers): forward_of runs the prepared model's forward, with whatever
  /// it takes beside the input (charlm's padding mask).
  virtual Tensor forward(const std::function<Tensor(nn::Module&)>& forward_of) = 0;
  /// After backward: every gradient averaged over the ranks.
  virtual void reduce_gradients() = 0;
  /// Each value replaced by its sum over the ranks, on every rank.
  virtual void sum(std::span<double> values) = 0;
  /// Rank 0's buffers (BatchNorm's running statistics) on every rank, so that every rank
  /// evaluates the model rank 0 saves.
  virtual void share_buffers() = 0;
  /// The sum of one value over the ranks.
  double total(double value) {
    sum({&value, 1});
    return value;
  }
};

/// Rows [begin, end) of this rank's slice of a global batch of n rows: n split as evenly as
/// it goes, the first n % world ranks one row longer.
struct Shard {
  int64_t begin, end;
};
inline Shard shard_of(int64_t n, int rank, int world) {
  const int64_t base = n / world, extra = n % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

}  // namespace minidl::apps
