#include "minidl/distributed/distributed_sampler.hpp"

#include <numeric>
#include <utility>

#include "minidl/tensor/error.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::distributed {

DistributedSampler::DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options)
    : dataset_size_(dataset_size), options_(options) {
  if (options.num_replicas < 1)
    throw Error(cat("DistributedSampler: num_replicas must be at least 1, got ", options.num_replicas));
  if (options.rank < 0 || options.rank >= options.num_replicas)
    throw Error(cat("DistributedSampler: invalid rank ", options.rank, ", rank should be in the interval [0, ",
                    options.num_replicas - 1, "]"));
  if (dataset_size < 0) throw Error(cat("DistributedSampler: dataset size must not be negative, got ", dataset_size));
  const int64_t n = dataset_size, replicas = options.num_replicas;
  num_samples_ = options.drop_last && n % replicas != 0 ? n / replicas : (n + replicas - 1) / replicas;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order(static_cast<size_t>(dataset_size_));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (options_.shuffle) {  // Fisher-Yates from seed + epoch, as the DataLoader shuffles
    Generator generator(options_.seed + uint64_t(epoch_));
    for (int64_t i = dataset_size_ - 1; i > 0; --i)
      std::swap(order[size_t(i)], order[generator.below(uint64_t(i) + 1)]);
  }
  const size_t total = size_t(total_size());
  if (order.size() > total) {
    order.resize(total);  // drop_last: the tail no rank could share evenly
  } else {
    for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i]);  // pad with the first indices
  }
  std::vector<int64_t> mine;
  mine.reserve(size_t(num_samples_));
  for (size_t i = size_t(options_.rank); i < total; i += size_t(options_.num_replicas)) mine.push_back(order[i]);
  return mine;
}

}  // namespace minidl::distributed
