#include "lesson/mpi_parallel.hpp"

#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/data_parallel.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/distributed/sync_batch_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {
namespace {

class MpiParallel : public Parallel {
 public:
  explicit MpiParallel(MpiParallelOptions options) : options_(options) {}
  int rank() const override { return distributed::rank(); }
  int world_size() const override { return distributed::world_size(); }

  std::shared_ptr<nn::Sequential> prepare(std::shared_ptr<nn::Sequential> model) override {
    if (options_.sync_batch_norm)
      model = std::dynamic_pointer_cast<nn::Sequential>(distributed::convert_sync_batchnorm(model));
    if (!model) throw Error("mpi_parallel: convert_sync_batchnorm did not return a Sequential");
    // Gradients as views into the buckets: the same values as copied ones, one copy fewer.
    ddp_ = std::make_shared<distributed::DistributedDataParallel>(
        model, distributed::DistributedDataParallelOptions{.bucket_bytes = options_.bucket_bytes,
                                                           .gradient_as_bucket_view = true});
    return model;
  }
  Tensor forward(const Tensor& input) override { return (*ddp_)(input); }
  void reduce_gradients() override { ddp_->reduce_gradients(); }
  double sum(double value) override {
    distributed::all_reduce(std::span<double>(&value, 1));
    return value;
  }

 private:
  MpiParallelOptions options_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
};

}  // namespace

std::shared_ptr<Parallel> mpi_parallel(MpiParallelOptions options) { return std::make_shared<MpiParallel>(options); }

}  // namespace minidl::lesson
