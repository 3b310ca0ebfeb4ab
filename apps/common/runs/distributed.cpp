#include "lesson/parallel.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

std::optional<std::string> parallel_refusal(bool built_with_mpi, bool launched_by_mpirun) {
  if (!built_with_mpi)
    return "--distributed: this digits was built without MPI; install libopenmpi-dev and openmpi-bin "
           "and configure with -DMINIDL_WITH_MPI=ON (or AUTO, the default)";
  if (!launched_by_mpirun)
    return "--distributed: not started by mpirun; run it as mpirun -np N digits --distributed ...";
  return std::nullopt;
}

std::optional<std::string> split_refusal(int64_t batch_size, bool drop_last, bool plain_batch_norm, int world,
                                         int64_t train_examples) {
  const int64_t batch = std::min(batch_size, train_examples);
  if (batch % world != 0)
    return cat("--batch-size ", batch, " does not divide across ", world,
               " ranks: choose a multiple of the rank count (each rank takes batch / ranks)");
  const int64_t last = drop_last ? 0 : train_examples % batch;
  const int64_t need = plain_batch_norm ? 2 : 1;
  if (last > 0 && last / world < need)
    return cat("the short last batch of ", last, " examples (", train_examples, " in batches of ", batch,
               ") gives some of the ", world, " ranks fewer than ", need, " example", need > 1 ? "s" : "",
               plain_batch_norm ? " (BatchNorm on a rank's own shard needs 2)" : "",
               ": pass --drop-last, --sync-bn or another batch size");
  if (plain_batch_norm && batch / world < need)
    return cat("--batch-size ", batch, " across ", world,
               " ranks leaves one example per rank, and BatchNorm on a rank's own shard needs 2: pass --sync-bn or "
               "a larger batch");
  return std::nullopt;
}

}  // namespace minidl::lesson
