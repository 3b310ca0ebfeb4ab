#include "distributed.hpp"

#include <algorithm>
#include <iostream>
#include <limits>
#include <thread>

#include "lesson/parallel.hpp"
#include "minidl/distributed/environment.hpp"
#if MINIDL_WITH_MPI
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/data_parallel.hpp"
#endif

namespace minidl::charlm {

namespace {

std::string refusal(bool built_with_mpi) {
  if (!built_with_mpi)
    return "--distributed: this charlm was built without MPI; install libopenmpi-dev and openmpi-bin and configure "
           "with -DMINIDL_WITH_MPI=ON (or AUTO, the default)";
  return "--distributed: not started by mpirun; run it as mpirun -np N charlm --distributed ...";
}

#if MINIDL_WITH_MPI

// The model as DistributedDataParallel calls it, on tokens alone: the batch's mask is set
// just before each forward.
class MaskedForward : public nn::Module {
 public:
  explicit MaskedForward(std::shared_ptr<CharTransformer> model)
      : model_(register_module("module", std::move(model))) {}
  Tensor forward(const Tensor& idx) override { return model_->forward(idx, *mask); }
  std::string type_name() const override { return "MaskedForward"; }
  const TokenMask* mask = nullptr;

 private:
  std::shared_ptr<CharTransformer> model_;
};

class MpiDataParallel : public DataParallel {
 public:
  int rank() const override { return distributed::rank(); }
  int world_size() const override { return distributed::world_size(); }
  void prepare(const std::shared_ptr<CharTransformer>& model) override {
    model_ = std::make_shared<MaskedForward>(model);
    // Gradients as views into the buckets: the same values as copied ones, one copy fewer.
    ddp_ = std::make_shared<distributed::DistributedDataParallel>(
        model_, distributed::DistributedDataParallelOptions{.gradient_as_bucket_view = true});
  }
  Tensor forward(const Tensor& idx, const TokenMask& mask) override {
    model_->mask = &mask;
    return (*ddp_)(idx);
  }
  void reduce_gradients() override { ddp_->reduce_gradients(); }
  void sum(std::span<double> values) override { distributed::all_reduce(values); }
  void share_buffers() override {
    for (const auto& [name, buffer] : model_->named_buffers()) distributed::broadcast(buffer);
  }

 private:
  std::shared_ptr<MaskedForward> model_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
};

#endif

}  // namespace

#if MINIDL_WITH_MPI

int run_distributed(Settings s, const std::function<int(Settings)>& run) {
  if (!distributed::launched_by_mpirun()) throw UsageError(refusal(true));
  distributed::Environment mpi;
  const int rank = distributed::rank(), world = distributed::world_size();
  // Batches are whole (the short last one dropped; run() refuses one larger than the split)
  // and every word holds 2 positions or more, so BatchNorm on a shard has its 2 values: only
  // the split of the batch itself can be refused.
  constexpr int64_t kWholeBatches = std::numeric_limits<int64_t>::max();
  if (auto why = lesson::split_refusal(s.run.batch_size, /*drop_last=*/true, /*plain_batch_norm=*/false, world,
                                       kWholeBatches)) {
    if (rank == 0) std::cerr << "charlm: " << *why << std::endl;
    return 2;
  }
  // The ranks on this machine share its cores.
  if (!s.threads)
    s.threads = std::max(1, int(std::max(1u, std::thread::hardware_concurrency())) / distributed::local_size());
  s.run.parallel = std::make_shared<MpiDataParallel>();
  s.run.model.sync_batch_norm = s.sync_bn;
  if (rank != 0) {  // rank 0 alone prints and writes
    s.quiet = true;
    s.print = false;
    s.samples = 0;
    s.curves.clear();
    s.val_curves.clear();
    s.summary.clear();
    s.tensorboard.clear();
    s.report.clear();
    s.save_dir.clear();
  }
  return distributed::run_or_abort("charlm", [&] { return run(s); });
}

#else

int run_distributed(Settings, const std::function<int(Settings)>&) { throw UsageError(refusal(false)); }

#endif

}  // namespace minidl::charlm
