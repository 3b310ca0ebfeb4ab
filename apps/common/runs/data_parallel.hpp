#pragma once
// Data-parallel training for train_run (digits --distributed): what a run asks of the
// processes it trains with. In one process there is none (TrainOptions::parallel is null);
// lesson/mpi_parallel.cpp implements it on minidl::distributed when built with MPI.
//
// Each step every rank takes its contiguous slice of the same global batch (the loader's
// permutation is the same on every rank: the same seed), so N ranks see the batches one
// process sees at that global batch size, in the same order.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "minidl/nn/sequential.hpp"

namespace minidl::lesson {

class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// The model this rank trains, called once before the optimizer exists: BatchNorm turned
  /// into SyncBatchNorm when asked, parameters and buffers taken from rank 0.
  virtual std::shared_ptr<nn::Sequential> prepare(std::shared_ptr<nn::Sequential> model) = 0;
  /// The model's training forward (rank 0's buffers first, as PyTorch's broadcast_buffers).
  virtual Tensor forward(const Tensor& input) = 0;
  /// After backward: every gradient averaged over the ranks.
  virtual void reduce_gradients() = 0;
  /// The sum of value over the ranks, on every rank.
  virtual double sum(double value) = 0;
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

/// Why data-parallel training cannot run here, or nothing: minidl was built without MPI,
/// or this process was not started by mpirun.
std::optional<std::string> parallel_refusal(bool built_with_mpi, bool launched_by_mpirun);

/// Why a global batch cannot be split across `world` ranks, or nothing: the batch size must
/// be a multiple of the ranks, every rank needs a row of the short last batch, and BatchNorm
/// on a rank's own shard (plain_batch_norm: without SyncBatchNorm) two rows in every batch.
std::optional<std::string> split_refusal(int64_t batch_size, bool drop_last, bool plain_batch_norm, int world,
                                         int64_t train_examples);

}  // namespace minidl::lesson
