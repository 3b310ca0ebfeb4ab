#pragma once
// SyncBatchNorm, as torch.nn's: BatchNorm whose training statistics cover the global batch,
// every rank's shard, instead of this rank's alone. Forward gathers each rank's per-channel
// count, mean and M2 (sum of squared deviations) and merges them in rank order with Chan's
// parallel algorithm, so every rank normalizes with the same statistics; backward sums the
// two per-channel sums the input gradient needs (of dy and of dy * x_hat) across ranks.
// Running statistics move as BatchNorm's, from the global statistics. In eval mode it is
// BatchNorm. With one process it equals BatchNorm1d/2d.
#include <memory>

#include "minidl/nn/norm/batch_norm.hpp"

namespace minidl::distributed {

/// The training forward of SyncBatchNorm as one op: x (N, C, *) is this rank's shard;
/// running_mean and running_var (C, or undefined) are updated in place with the global
/// statistics (unbiased variance), weight and bias (C, or undefined). A collective: every
/// rank calls it, and its backward, at the same point. Throws when the global batch holds
/// one value per channel.
Tensor sync_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, double momentum, double eps);

/// Input (N, C, *): BatchNorm1d's and BatchNorm2d's shapes alike.
class SyncBatchNorm : public nn::BatchNormBase {
 public:
  explicit SyncBatchNorm(nn::BatchNormOptions options) : BatchNormBase(options) {}
  explicit SyncBatchNorm(int64_t num_features) : BatchNormBase({num_features}) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "SyncBatchNorm"; }

 protected:
  void check_input_dim(const Tensor& input) const override;
};

/// PyTorch's SyncBatchNorm.convert_sync_batchnorm: module with every BatchNorm1d/2d turned
/// into a SyncBatchNorm with the same options, parameters, buffers and mode (values copied).
/// A BatchNorm is returned converted, a Sequential rebuilt with converted children (other
/// children shared), any other module returned as it is; throws when such a module holds a
/// BatchNorm below it, which it cannot replace.
std::shared_ptr<nn::Module> convert_sync_batchnorm(const std::shared_ptr<nn::Module>& module);

}  // namespace minidl::distributed
