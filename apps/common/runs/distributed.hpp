#pragma once
// --distributed (digits, charlm): the same runs trained data-parallel by every process mpirun
// started. The global --batch-size is split across the ranks; rank 0 alone prints and writes.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runs/data_parallel.hpp"

namespace minidl::apps {

/// Why data-parallel training cannot run here, or nothing: `program` was built without MPI,
/// or this process was not started by mpirun.
std::optional<std::string> parallel_refusal(const std::string& program, bool built_with_mpi, bool launched_by_mpirun);

/// Why a global batch cannot be split across `world` ranks, or nothing: the batch size must
/// be a multiple of the ranks, every rank needs a row of the short last batch, and BatchNorm
/// on a rank's own shard (plain_batch_norm: without SyncBatchNorm) two rows in every batch.
std::optional<std::string> split_refusal(int64_t batch_size, bool drop_last, bool plain_batch_norm, int world,
                                         int64_t train_examples);

/// How a program's runs split their batches across the ranks (split_refusal's inputs).
struct BatchSplit {
  int64_t batch_size;
  bool drop_last;
  bool plain_batch_norm;
  std::function<int64_t()> train_examples;  // read once MPI has started
  bool sync_batch_norm = false;             // --sync-bn: DataParallel::prepare converts a Sequential's BatchNorms
};

/// Starts MPI and returns run(parallel) on every rank, parallel being this rank's
/// DataParallel. Throws UsageError for parallel_refusal(); a split the ranks do not take is
/// one line from rank 0 and exit code 2 on every rank. An error on any rank ends every rank
/// (MPI_Abort), naming the rank.
int run_distributed(const std::string& program, const BatchSplit& split,
                    const std::function<int(std::shared_ptr<DataParallel> parallel)>& run);

/// The threads of each rank when not given: its share of this machine's cores.
int threads_per_rank();

}  // namespace minidl::apps
