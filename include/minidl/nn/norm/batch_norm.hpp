#pragma once
// BatchNorm1d and BatchNorm2d, as torch.nn's: statistics per channel over the batch
// (and positions). Training normalizes with the batch mean and biased variance and moves
// the running statistics (unbiased variance); eval normalizes with the running ones.
#include <optional>

#include "minidl/nn/module.hpp"

namespace minidl::nn {

struct BatchNormOptions {
  int64_t num_features;                  // C
  double eps = 1e-5;                     // added to the variance inside the sqrt
  std::optional<double> momentum = 0.1;  // weight of the new statistic; nullopt = cumulative average
  bool affine = true;                    // learnable weight (1) and bias (0)
  bool track_running_stats = true;       // running_mean, running_var, num_batches_tracked
};

/// What BatchNorm1d and BatchNorm2d share (PyTorch's _BatchNorm); they differ only in the
/// input ranks they accept.
class BatchNormBase : public Module {
 public:
  Tensor weight;               // (C), absent when !affine
  Tensor bias;                 // (C), absent when !affine
  Tensor running_mean;         // (C) buffer, absent when !track_running_stats
  Tensor running_var;          // (C) buffer
  Tensor num_batches_tracked;  // () buffer, saved as int64

  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const BatchNormOptions& options() const { return options_; }

  /// running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  /// reset_running_stats(), weight = 1, bias = 0.
  void reset_parameters();

 protected:
  explicit BatchNormBase(BatchNormOptions options);
  /// Throws naming the accepted ranks unless input's rank is one of them.
  virtual void check_input_dim(const Tensor& input) const = 0;
  void fill_missing_state(const std::string& prefix, StateDict& state) const override;

 private:
  BatchNormOptions options_;
};

/// Input (N, C) or (N, C, L).
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(BatchNormOptions options) : BatchNormBase(options) {}
  explicit BatchNorm1d(int64_t num_features) : BatchNormBase({num_features}) {}
  std::string type_name() const override { return "BatchNorm1d"; }

 protected:
  void check_input_dim(const Tensor& input) const override;
};

/// Input (N, C, H, W).
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(BatchNormOptions options) : BatchNormBase(options) {}
  explicit BatchNorm2d(int64_t num_features) : BatchNormBase({num_features}) {}
  std::string type_name() const override { return "BatchNorm2d"; }

 protected:
  void check_input_dim(const Tensor& input) const override;
};

}  // namespace minidl::nn
