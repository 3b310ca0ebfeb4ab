#pragma once
// DistributedDataParallel, as torch.nn.parallel's: every rank holds a replica of the
// module and trains it on its own shard of each batch; the replicas stay equal because
// they start equal (parameters broadcast from rank 0 at construction) and every step
// applies the same averaged gradient.
//
//   auto ddp = std::make_shared<distributed::DistributedDataParallel>(model);
//   optim::SGD opt(model->parameters(), {.lr = 0.05});
//   loss = cross_entropy((*ddp)(shard.inputs), shard.targets);
//   loss.backward();
//   ddp->reduce_gradients();  // PyTorch does this inside backward; here it follows it
//   opt.step();
//
// Gradients are averaged in buckets: the parameters, last first (the order backward
// produces them in), packed into buffers of at most bucket_bytes, one allreduce per bucket.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "minidl/nn/module.hpp"

namespace minidl::distributed {

struct DistributedDataParallelOptions {
  int64_t bucket_bytes = 25 * 1024 * 1024;  // bucket_cap_mb=25
  bool broadcast_buffers = true;            // rank 0's buffers before every forward in grad mode
  // Each parameter's averaged gradient is a view into its bucket (PyTorch's option of the
  // name): no copy back out of the bucket, and the bucket's memory is the gradients'. A
  // gradient kept from an earlier step is overwritten by the next reduce_gradients().
  bool gradient_as_bucket_view = false;
};

class DistributedDataParallel : public nn::Module {
 public:
  /// Broadcasts module's parameters and buffers from rank 0 (a collective: every rank
  /// constructs its DistributedDataParallel at the same point).
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, DistributedDataParallelOptions options = {});

  /// With broadcast_buffers and grad mode on, every buffer takes rank 0's values first (so
  /// BatchNorm's running statistics are rank 0's), then the module runs.
  Tensor forward(const Tensor& input) override;
  /// The same for a forward that takes more than the input (a mask beside it, as PyTorch's
  /// DDP passes forward(*inputs, **kwargs) on): forward_of runs the wrapped module, e.g.
  ///   ddp.forward_with([&](nn::Module& m) { return model.forward(idx, mask); })
  Tensor forward_with(const std::function<Tensor(nn::Module&)>& forward_of);
  std::string type_name() const override { return "DistributedDataParallel"; }

  /// Replaces every parameter's gradient by its average over the ranks, one allreduce per
  /// bucket (all_reduce_divided): each gradient divided by world_size() where the allreduce
  /// first reads it, then summed (PyTorch's order), into the bucket. A parameter without a
  /// gradient on this rank counts as zeros.
  void reduce_gradients();

  nn::Module& module() const { return *module_; }
  /// Each bucket's parameter indices into module().parameters(), in allreduce order.
  const std::vector<std::vector<size_t>>& buckets() const { return buckets_; }

 private:
  void before_forward();
  void broadcast_buffers();
  void make_bucket_views();

  std::shared_ptr<nn::Module> module_;
  DistributedDataParallelOptions options_;
  std::vector<Tensor> parameters_;
  std::vector<std::vector<size_t>> buckets_;
  std::vector<float> bucket_;                      // (largest bucket's floats) reused by every allreduce
  std::vector<std::vector<Tensor>> bucket_views_;  // with gradient_as_bucket_view: per bucket, its parameters' views
  std::vector<float> buffer_;                      // (all buffers' floats) for the broadcast
};

}  // namespace minidl::distributed
