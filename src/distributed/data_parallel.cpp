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

// values / divisor into out: the average's division (made before the sum, as PyTorch's
// allreduce hook does) in the copy into the bucket; no gradient counts as zeros.
void copy_divided(const Tensor& values, float divisor, float* out, int64_t count) {
  if (!values.defined()) {
    std::fill(out, out + count, 0.0f);
    return;
  }
  const float* in = values.data();
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] / divisor;  // in may be out: a bucket view
}

// The floats of a bucket's parameters, together.
int64_t bucket_floats(const std::vector<Tensor>& parameters, const std::vector<size_t>& bucket) {
  int64_t n = 0;
  for (size_t i : bucket) n += parameters[i].numel();
  return n;
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
  if (options.gradient_as_bucket_view) {
    make_bucket_views();
  } else {
    int64_t largest = 0;
    for (const std::vector<size_t>& bucket : buckets_) largest = std::max(largest, bucket_floats(parameters_, bucket));
    bucket_.resize(size_t(largest));
  }
  // The replicas start equal: rank 0's parameters and buffers everywhere.
  NoGradGuard no_grad;
  std::vector<float> flat(total_numel(parameters_));
  pack(flat, parameters_);
  broadcast(std::span<float>(flat));
  unpack(flat, parameters_);
  broadcast_buffers();
}

// One flat tensor per bucket and, in it, a view per parameter (its shape, at its offset).
void DistributedDataParallel::make_bucket_views() {
  for (const std::vector<size_t>& bucket : buckets_) {
    const Tensor flat = Tensor::zeros({bucket_floats(parameters_, bucket)});
    std::vector<Tensor>& views = bucket_views_.emplace_back();
    int64_t at = 0;
    for (size_t i : bucket) {
      auto view = std::make_shared<TensorImpl>();
      view->storage = flat.impl_ptr()->storage;
      view->offset = flat.impl_ptr()->offset + at;
      view->shape = parameters_[i].shape();
      views.emplace_back(std::move(view));
      at += parameters_[i].numel();
    }
  }
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

void DistributedDataParallel::before_forward() {
  if (options_.broadcast_buffers && grad_enabled()) broadcast_buffers();
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  before_forward();
  return module_->forward(input);
}

Tensor DistributedDataParallel::forward_with(const std::function<Tensor(nn::Module&)>& forward_of) {
  before_forward();
  return forward_of(*module_);
}

void DistributedDataParallel::reduce_gradients() {
  const bool alone = world_size() == 1;
  if (alone && !options_.gradient_as_bucket_view) {  // the average of one: only the missing gradients to fill
    for (Tensor& p : parameters_)
      if (!p.grad().defined()) p.set_grad(Tensor::zeros(p.shape()));
    return;
  }
  const float ranks = float(world_size());
  std::vector<Segment> gradients;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const std::vector<size_t>& bucket = buckets_[b];
    float* flat = options_.gradient_as_bucket_view ? bucket_views_[b].front().data() : bucket_.data();
    int64_t at = 0;
    if (alone) {
      for (size_t i : bucket) {
        copy_divided(parameters_[i].grad(), ranks, flat + at, parameters_[i].numel());
        at += parameters_[i].numel();
      }
    } else {  // the division is made inside the allreduce, reading each gradient once
      gradients.clear();
      for (size_t i : bucket) {
        const Tensor& g = parameters_[i].grad();
        gradients.push_back({g.defined() ? g.data() : nullptr, size_t(parameters_[i].numel())});
        at += parameters_[i].numel();
      }
      all_reduce_divided(gradients, std::span<float>(flat, size_t(at)), ranks);
    }
    at = 0;
    for (size_t j = 0; j < bucket.size(); ++j) {
      Tensor& p = parameters_[bucket[j]];
      if (options_.gradient_as_bucket_view) {
        p.set_grad(bucket_views_[b][j]);
      } else {
        if (!p.grad().defined()) p.set_grad(Tensor::empty(p.shape()));
        std::memcpy(p.grad().data(), flat + at, size_t(p.numel()) * sizeof(float));
      }
      p.grad().bump_version();
      at += p.numel();
    }
  }
}

}  // namespace minidl::distributed
