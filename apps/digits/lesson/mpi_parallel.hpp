#pragma once
// lesson::Parallel on minidl::distributed (MPI): a DistributedDataParallel around the
// model, optionally with its BatchNorm layers turned into SyncBatchNorm. Built only with
// MPI; the caller owns the distributed::Environment.
#include <cstdint>
#include <memory>

#include "lesson/parallel.hpp"

namespace minidl::lesson {

struct MpiParallelOptions {
  bool sync_batch_norm = false;             // --sync-bn
  int64_t bucket_bytes = 25 * 1024 * 1024;  // DistributedDataParallel's bucket cap
};

/// One per run (it holds the run's DistributedDataParallel).
std::shared_ptr<Parallel> mpi_parallel(MpiParallelOptions options = {});

}  // namespace minidl::lesson
