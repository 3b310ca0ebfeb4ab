#pragma once
// StatsRecorder: per-layer statistics of a training step, built on the hooks, for any model.
//
//   diagnostics::StatsRecorder stats;
//   stats.watch_output("tanh1", *model[1]);      // the layer's output and its gradient
//   stats.watch_parameter("linear1.weight", w);  // gradient and update against the data
//   for (step...) {
//     if (step % 10 == 0) stats.arm(step);       // record this step
//     loss = ...; loss.backward();
//     stats.before_update(); optimizer.step(); stats.after_update();
//   }
//   stats.rows();  // (step, layer, quantity, statistic, value; a bin's edges)
//
// Quantities and statistics:
//   "output", "output_grad": mean, std, saturated (share of |x| > saturation; output only),
//                            and the histogram as "bin" rows holding the density, each with
//                            its edges (statistic_name: "bin:LO:HI", as digits --stats writes);
//   "parameter": data_std, grad_std, grad_to_data (grad_std / data_std), update_std
//                (std of the step's change, after - before) and update_to_data
//                (update_std / data_std before the step).
// The recorder's forward hooks are on the watched layers only from arm() to the step's end
// (after_update or disarm): a step that is not armed runs exactly as without a recorder, and
// hooks only read, so a recorded run's losses are those of a run without the recorder, bit
// for bit. The watched layers must be alive at every arm(); the
// recorder must outlive the backward passes of the steps it recorded (their graphs hold hooks
// that point to it).
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "minidl/autograd/hooks.hpp"
#include "minidl/diagnostics/tensor_stats.hpp"
#include "minidl/nn/module.hpp"

namespace minidl::diagnostics {

struct StatsOptions {
  float saturation = 0.97f;   // |x| above it counts as saturated (tanh's flat tails)
  int64_t bins = 40;          // histogram bins
  float output_range = 0.0f;  // the outputs' histogram range (HistogramOptions::range; 0: min..max)
  float grad_range = 0.0f;    // the output gradients' histogram range
};

/// One recorded figure: a trivially copyable row whose names are views, of string literals
/// and of the layer names the recorder keeps (StatsLog::names keeps them for a copy).
struct StatsRow {
  int64_t step;
  std::string_view layer;      // the name given to watch_output / watch_parameter
  std::string_view quantity;   // "output", "output_grad", "parameter"
  std::string_view statistic;  // "mean", "std", "saturated", "bin", "grad_to_data", ...
  double value;
  double low = 0.0, high = 0.0;  // a "bin" row's edges: the bar over [low, high)
};

/// The statistic as digits --stats names it: "bin:LO:HI" for a bin (its edges, 9 significant
/// digits), else the statistic.
std::string statistic_name(const StatsRow& row);

/// Rows with the layer names they point into: a copy shares the names, so its rows stay
/// valid when the recorder is gone.
struct StatsLog {
  std::shared_ptr<const std::deque<std::string>> names;
  std::vector<StatsRow> rows;
};

class StatsRecorder {
 public:
  /// Throws naming the option for bins < 1 or a negative range or saturation.
  explicit StatsRecorder(StatsOptions options = {});
  /// Removes its hooks (there are some only during an armed step) from the layers.
  ~StatsRecorder();
  StatsRecorder(const StatsRecorder&) = delete;
  StatsRecorder& operator=(const StatsRecorder&) = delete;

  /// Records `layer`'s output (a forward hook, registered at each arm()) and, when it requires
  /// grad, the gradient that reaches it in backward (a tensor hook on the output), under `name`.
  void watch_output(const std::string& name, nn::Module& layer);
  /// Records a parameter's gradient and update at before_update / after_update.
  void watch_parameter(const std::string& name, const Tensor& parameter);
  /// watch_parameter for every named parameter of model, under its dotted name.
  void watch_parameters(const nn::Module& model);

  /// The next forward, backward and update are step `step`'s: they are recorded. Registers
  /// the forward hooks on the watched layers (once, if already armed).
  void arm(int64_t step);
  bool armed() const { return armed_; }
  /// After backward, before the optimizer steps: the gradients, and a copy of each weight.
  void before_update();
  /// After the optimizer stepped: the updates; the step's record ends (disarms).
  void after_update();
  /// Ends the step's record without an update (an evaluation, a diverged step): removes the
  /// forward hooks from the layers.
  void disarm();

  /// Valid while the recorder lives; log() for rows that outlive it.
  const std::vector<StatsRow>& rows() const { return rows_; }
  StatsLog log() const { return {names_, rows_}; }
  /// log() without the copy: the rows move out, and rows() is empty after.
  StatsLog take_log() { return {names_, std::move(rows_)}; }
  const StatsOptions& options() const { return options_; }

 private:
  struct Output {
    std::string_view name;
    nn::Module* layer;
  };
  struct Parameter {
    std::string_view name;
    Tensor value;
    Tensor before;        // the copy taken by before_update; after_update turns it into the update
    bool copied = false;  // before holds this step's copy
    double data_std = 0.0;
  };
  std::string_view keep(const std::string& name);
  void add(std::string_view layer, std::string_view quantity, const TensorStats& stats, bool saturation);
  void add(std::string_view layer, std::string_view quantity, std::string_view statistic, double value);
  void hook(const Output& output);

  StatsOptions options_;
  bool armed_ = false;
  int64_t step_ = 0;
  std::vector<Output> outputs_;
  std::vector<RemovableHandle> hooks_;  // on the outputs' layers while armed
  std::vector<Parameter> parameters_;
  // The layer names the rows point into (push_back never moves a deque's elements).
  std::shared_ptr<std::deque<std::string>> names_ = std::make_shared<std::deque<std::string>>();
  std::vector<StatsRow> rows_;
};

}  // namespace minidl::diagnostics
