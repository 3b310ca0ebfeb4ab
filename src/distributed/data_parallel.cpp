#include "minidl/distributed/data_parallel.hpp"

#include <algorithm>
#include <cstring>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::distributed {
namespace {

// Copies every tensor into one flat buffer, or back out of it.
void pack(std::vector<float>& flat, const std::vector<Tensor>& tensors) {
  size_t at = 0;
  for (const Tensor& t : tensors) {
    std::memcpy(flat.data() + at, t.data(), size_t(t.numel()) * sizeof(float));
    at += size_t(t.numel());
  }
}

void unpack(const std::vector<float>& flat, const std::vector<Tensor>& tensors) {
  size_t at = 0;
  for (Tensor t : tensors) {
    std::memcpy(t.data(), flat.data() + at, size_t(t.numel()) * sizeof(float));
    t.bump_version();
    at += size_t(t.numel());
  }
}

// unpack of flat / divisor: the average's division made in the copy back, not a pass of its own.
void unpack_divided(const std::vector<float>& flat, float divisor, const std::vector<Tensor>& tensors) {
  const float* from = flat.data();
  for (Tensor t : tensors) {
    float* to = t.data();
    for (int64_t i = 0; i < t.numel(); ++i) to[i] = from[i] / divisor;
    t.bump_version();
    from += t.numel();
  }
}

size_t total_numel(const std::vector<Tensor>& tensors) {
  size_t n = 0;
  for (const Tensor& t : tensors) n += size_t(t.numel());
  return n;
}

// Parameters from the last to the first, a new bucket whenever the next one would pass
// the cap (a parameter larger than the cap has a bucket of its own).
std::vector<std::vector<size_t>> make_buckets(const std::vector<Tensor>& parameters, int64_t bucket_bytes) {
  std::vector<std::vector<size_t>> buckets;
  int64_t bytes = 0;
  for (size_t i = parameters.size(); i-- > 0;) {
    const int64_t size = parameters[i].numel() * int64_t(sizeof(float));
    if (buckets.empty() || (bytes > 0 && bytes + size > bucket_bytes)) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(i);
    bytes += size;
  }
  return buckets;
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 DistributedDataParallelOptions options)
    : module_(register_module("module", std::move(module))), options_(options) {
  if (options.bucket_bytes < 1)
    throw Error(cat("DistributedDataParallel: bucket_bytes must be positive, got ", options.bucket_bytes));
  parameters_ = module_->parameters();
  buckets_ = make_buckets(parameters_, options.bucket_bytes);
  size_t largest = 0;
  for (const std::vector<size_t>& bucket : buckets_) {
    size_t floats = 0;
    for (size_t i : bucket) floats += size_t(parameters_[i].numel());
    largest = std::max(largest, floats);
  }
  bucket_.resize(largest);
  // The replicas start equal: rank 0's parameters and buffers everywhere.
  NoGradGuard no_grad;
  std::vector<float> flat(total_numel(parameters_));
  pack(flat, parameters_);
  broadcast(std::span<float>(flat));
  unpack(flat, parameters_);
  broadcast_buffers();
}

void DistributedDataParallel::broadcast_buffers() {
  std::vector<Tensor> buffers;
  for (const auto& [name, value] : module_->named_buffers()) buffers.push_back(value);
  buffer_.resize(total_numel(buffers));
  if (buffer_.empty()) return;
  pack(buffer_, buffers);
  broadcast(std::span<float>(buffer_));
  unpack(buffer_, buffers);
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  if (options_.broadcast_buffers && grad_enabled()) broadcast_buffers();
  return module_->forward(input);
}

void DistributedDataParallel::reduce_gradients() {
  const bool alone = world_size() == 1;  // the average of one: only the missing gradients to fill
  for (const std::vector<size_t>& bucket : buckets_) {
    std::vector<Tensor> grads;
    size_t floats = 0;
    for (size_t i : bucket) {
      Tensor g = parameters_[i].grad();
      if (!g.defined()) {
        g = Tensor::zeros(parameters_[i].shape());
        parameters_[i].set_grad(g);
        g = parameters_[i].grad();
      }
      grads.push_back(g);
      floats += size_t(g.numel());
    }
    if (alone) continue;
    pack(bucket_, grads);
    all_reduce(std::span<float>(bucket_.data(), floats), ReduceOp::Sum);
    unpack_divided(bucket_, float(world_size()), grads);
  }
}

}  // namespace minidl::distributed
