#pragma once
// The experiments, one file each, and what they share (grid.hpp, tools.hpp). Experiments 7
// to 10 check exact claims; their measurements are functions here, so the tests
// (tests/test_lab_*.cpp) check the same.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grid.hpp"
#include "lab.hpp"
#include "models/charlm_norms.hpp"
#include "models/deep_net.hpp"

namespace minidl::lab {

std::shared_ptr<const Experiment> depth_experiment();
std::shared_ptr<const Experiment> learning_rate_experiment();
std::shared_ptr<const Experiment> init_scale_experiment();
std::shared_ptr<const Experiment> batch_size_experiment();
std::shared_ptr<const Experiment> eval_mode_experiment();
std::shared_ptr<const Experiment> running_stats_experiment();
std::shared_ptr<const Experiment> batch_mates_experiment();
std::shared_ptr<const Experiment> bias_before_norm_experiment();
std::shared_ptr<const Experiment> rms_offset_experiment();
std::shared_ptr<const Experiment> group_norm_experiment();
std::shared_ptr<const Experiment> cnn_batch_size_experiment();
std::shared_ptr<const Experiment> careful_init_experiment();
// These two need the trainer's optimizer switch (training/trainer_setup.hpp).
std::shared_ptr<const Experiment> pre_post_norm_experiment();
std::shared_ptr<const Experiment> adam_norm_experiment();
// Runs `mpirun ... digits --distributed` (built with MPI only; otherwise "not run").
std::shared_ptr<const Experiment> nothing_to_sync_experiment();

// ---- the sequence chapter (experiments/sequence/), in report order ----
std::shared_ptr<const Experiment> warmup_map_experiment();
std::shared_ptr<const Experiment> init_gradients_experiment();
std::shared_ptr<const Experiment> padding_stats_experiment();
std::shared_ptr<const Experiment> leak_experiment();
std::shared_ptr<const Experiment> batch_one_experiment();
std::shared_ptr<const Experiment> rms_vs_layer_experiment();
// Runs `mpirun ... charlm --distributed` (built with MPI only; otherwise "not run").
std::shared_ptr<const Experiment> charlm_sync_experiment();

// ---- the papers behind the lesson ----
std::shared_ptr<const Experiment> ioffe_fig1_experiment();
std::shared_ptr<const Experiment> santurkar_smoothness_experiment();
std::shared_ptr<const Experiment> dyt_deep_net_experiment();  // experiments/dyt_deep_net.cpp
std::shared_ptr<const Experiment> dyt_charlm_experiment();    // experiments/sequence/dyt_charlm.cpp (charlm)
std::shared_ptr<const Experiment> scaled_lr_batch_experiment();
std::shared_ptr<const Experiment> micro_batch_experiment();  // experiments/sequence/micro_batch.cpp (charlm)
std::shared_ptr<const Experiment> warmup_gap_experiment();   // experiments/sequence/warmup_gap.cpp (charlm)

// ---- 7. batch mates ----
/// One example's output (the lesson's network, freshly built from seed, in training mode)
/// as its batch mates change, and how it differs between training and eval mode and batch sizes.
struct BatchMates {
  lesson::NormKind norm;
  double spread_over_mates;  // max over outputs of (max - min) across random batches of 64
  double train_vs_eval;      // max |train-mode output - eval-mode output|, batch of 64
  double across_sizes;       // max |output in a batch of 64 - in batches of 2 and 1 (eval mode for BatchNorm's 1)|
  bool bitwise;              // spread_over_mates and train_vs_eval exactly 0 (across_sizes may round:
                             // OpenBLAS picks kernels by the batch size)
};
BatchMates measure_batch_mates(const data::DigitsSplit& data, lesson::NormKind norm, uint64_t seed, int batches = 8);

// ---- 8. bias before a norm ----
struct BiasBeforeNorm {
  lesson::NormKind norm;     // Batch or Layer
  double output_difference;  // max |norm(Linear with bias) - norm(same Linear without bias)|
  double bias_gradient;      // max |d loss / d bias|
  double weight_gradient;    // max |d loss / d weight| (for scale)
};
BiasBeforeNorm measure_bias_before_norm(lesson::NormKind norm, uint64_t seed);

// ---- 9. RMSNorm's offset ----
struct OffsetMeans {
  double offset;
  double input_mean, layer_norm_mean, rms_norm_mean;  // mean over all outputs
};
/// Random (32, 64) inputs plus offset, through LayerNorm(64) and RMSNorm(64), untrained.
OffsetMeans measure_offset(double offset, uint64_t seed);
/// The lesson's worked numbers: name, expected (as the lesson rounds them), computed.
struct WorkedExample {
  std::string name;
  std::vector<double> expected, computed;
  double tolerance;  // half a unit of the lesson's last printed digit
};
std::vector<WorkedExample> worked_examples();

// ---- 10. GroupNorm's two ends ----
struct GroupNormEnds {
  double one_group_vs_layer_norm;    // max |GroupNorm(1, C)(x) - LayerNorm((C, L))(x)|
  double c_groups_vs_instance_norm;  // max |GroupNorm(C, C)(x) - per-channel normalization in double|
};
/// On random (N, C, L) input, with eps 1e-5 and default affine parameters.
GroupNormEnds measure_group_norm_ends(uint64_t seed, int64_t n = 4, int64_t c = 8, int64_t l = 5);

// ---- 15. nothing to synchronize ----
/// What one rank hands to MPI's collectives in `digits --distributed` (train_run with
/// DistributedDataParallel, SyncBatchNorm with --sync-bn), counted from the lesson's model:
/// the buffers' bytes as distributed::traffic() counts them (not what the network carries).
struct RankTraffic {
  int64_t gradient_bytes = 0;     // every parameter's gradient as float, averaged (none on one rank)
  int64_t buffer_bytes = 0;       // rank 0's buffers (BatchNorm's running statistics) before each forward
  int64_t statistics_bytes = 0;   // SyncBatchNorm, per layer: (1 + 2C) doubles gathered, 2C summed
  int64_t bookkeeping_bytes = 0;  // the step's loss and the stop flag: a double each
  int64_t step_collectives = 0;   // MPI calls per step
  int64_t setup_bytes = 0, setup_collectives = 0;  // once per run: parameters and buffers from rank 0
  int64_t step_bytes() const;
};
RankTraffic rank_traffic(lesson::NormKind norm, bool sync_bn, int ranks, const lesson::DeepNetOptions& net = {});

// ---- the sequence chapter's shared measurements ----

/// The module at a dotted state_dict prefix ("transformer.h.0.ln_1"); throws naming the name
/// when there is none.
nn::Module& submodule(nn::Module& root, const std::string& dotted_name);
/// padding_stats' run: charlm (small) trained `steps(settings)` steps with that norm on random
/// or length-sorted ("random", "sorted") batches, watching block 0's ln_1 at every step; its
/// record's fields are padding_stats' (norm, order, seed, status, steps, pad_share,
/// padding_dev, running_mean_dev, running_var_dev, val_loss, padding_sensitivity, ms_per_step).
Record measure_padding_stats(const Context& context, charlm::NormKind norm, const std::string& order, uint64_t seed);

/// rms_vs_layer's timing: a LayerNorm(64) and an RMSNorm(64) forward and backward on one
/// (32, 16, 64) batch, `repeats` times each, in `pairs` alternating pairs, timed in the CPU time
/// of the calling thread with its OpenMP count held at one.
struct NormCost {
  double layer_us = INFINITY, rms_us = INFINITY;  // the fastest pair's time per forward+backward
  double median_ratio = 0.0;                      // RMSNorm's time over LayerNorm's, median over pairs
};
NormCost measure_norm_cost(int pairs, int repeats);

}  // namespace minidl::lab
