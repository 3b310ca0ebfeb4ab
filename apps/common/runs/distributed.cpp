#include "runs/distributed.hpp"

#include <iostream>
#include <thread>

#include "minidl/distributed/environment.hpp"
#include "minidl/tensor/error.hpp"
#if MINIDL_WITH_MPI
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/data_parallel.hpp"
#include "minidl/distributed/sync_batch_norm.hpp"
#endif

namespace minidl::apps {

std::optional<std::string> parallel_refusal(const std::string& program, bool built_with_mpi, bool launched_by_mpirun) {
  if (!built_with_mpi)
    return cat("--distributed: this ", program,
               " was built without MPI; install libopenmpi-dev and openmpi-bin and configure with "
               "-DMINIDL_WITH_MPI=ON (or AUTO, the default)");
  if (!launched_by_mpirun)
    return cat("--distributed: not started by mpirun; run it as mpirun -np N ", program, " --distributed ...");
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

int threads_per_rank() {
  return std::max(1, int(std::max(1u, std::thread::hardware_concurrency())) / distributed::local_size());
}

#if MINIDL_WITH_MPI

namespace {

// DataParallel on minidl::distributed: a DistributedDataParallel around the model.
class MpiDataParallel : public DataParallel {
 public:
  explicit MpiDataParallel(bool sync_batch_norm) : sync_batch_norm_(sync_batch_norm) {}
  int rank() const override { return distributed::rank(); }
  int world_size() const override { return distributed::world_size(); }
  std::shared_ptr<nn::Module> prepare(std::shared_ptr<nn::Module> model) override {
    if (sync_batch_norm_) model = distributed::convert_sync_batchnorm(model);
    // Gradients as views into the buckets: the same values as copied ones, one copy fewer.
    ddp_ = std::make_shared<distributed::DistributedDataParallel>(
        model, distributed::DistributedDataParallelOptions{.gradient_as_bucket_view = true});
    model_ = model;
    return model;
  }
  Tensor forward(const std::function<Tensor(nn::Module&)>& forward_of) override {
    return ddp_->forward_with(forward_of);
  }
  void reduce_gradients() override { ddp_->reduce_gradients(); }
  void sum(std::span<double> values) override { distributed::all_reduce(values); }
  void share_buffers() override {
    for (const auto& [name, buffer] : model_->named_buffers()) distributed::broadcast(buffer);
  }

 private:
  bool sync_batch_norm_;
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
};

}  // namespace

int run_distributed(const std::string& program, const BatchSplit& split,
                    const std::function<int(std::shared_ptr<DataParallel> parallel)>& run) {
  if (auto why = parallel_refusal(program, true, distributed::launched_by_mpirun())) throw UsageError(*why);
  distributed::Environment mpi;
  // Decided alike on every rank from the same options, so every rank returns here together.
  if (auto why = split_refusal(split.batch_size, split.drop_last, split.plain_batch_norm, distributed::world_size(),
                               split.train_examples())) {
    if (distributed::rank() == 0) std::cerr << program << ": " << *why << std::endl;
    return 2;
  }
  return distributed::run_or_abort(program,
                                   [&] { return run(std::make_shared<MpiDataParallel>(split.sync_batch_norm)); });
}

#else

int run_distributed(const std::string& program, const BatchSplit&,
                    const std::function<int(std::shared_ptr<DataParallel>)>&) {
  throw UsageError(*parallel_refusal(program, false, false));
}

#endif

}  // namespace minidl::apps
