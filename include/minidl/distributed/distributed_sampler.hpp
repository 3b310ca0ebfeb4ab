#pragma once
// DistributedSampler, as torch.utils.data.distributed's: each rank's disjoint share of a
// dataset's indices for one epoch. Every rank draws the same permutation (from seed + epoch,
// so set_epoch gives each epoch its own), pads it by repeating its first indices up to a
// multiple of num_replicas (or with drop_last cuts the tail), and takes every
// num_replicas-th index from position rank. Needs no communication (built without MPI too).
//
//   distributed::DistributedSampler sampler(dataset.size(), {.num_replicas = n, .rank = r});
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     sampler.set_epoch(epoch);
//     for (const data::Batch& batch : loader.epoch(sampler.indices())) ...
//   }
// (the loader without shuffle; batches are consecutive chunks of this rank's indices).
#include <cstdint>
#include <vector>

namespace minidl::distributed {

struct DistributedSamplerOptions {
  int64_t num_replicas = 1;  // world size
  int64_t rank = 0;
  bool shuffle = true;
  uint64_t seed = 0;  // the same on every rank
  bool drop_last = false;
};

class DistributedSampler {
 public:
  /// Throws naming the value when num_replicas < 1, rank is outside 0..num_replicas-1, or
  /// dataset_size is negative.
  DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options);

  /// The epoch whose permutation indices() draws (PyTorch: call before each epoch).
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  /// This rank's indices for the current epoch: size() of them.
  std::vector<int64_t> indices() const;
  /// Indices per rank: ceil(n / replicas), or with drop_last (and n not a multiple of the
  /// replicas) floor(n / replicas).
  int64_t size() const { return num_samples_; }
  /// size() * num_replicas: the padded (or cut) permutation's length.
  int64_t total_size() const { return num_samples_ * options_.num_replicas; }

 private:
  int64_t dataset_size_;
  DistributedSamplerOptions options_;
  int64_t num_samples_;
  int64_t epoch_ = 0;
};

}  // namespace minidl::distributed
