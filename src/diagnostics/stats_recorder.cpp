#include "minidl/diagnostics/stats_recorder.hpp"

#include <charconv>
#include <cmath>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::diagnostics {
namespace {

constexpr std::string_view kBin = "bin";

}  // namespace

// "bin:-1:-0.95": the bin's edges, 9 significant digits (the widths add up to the range).
std::string statistic_name(const StatsRow& row) {
  if (row.statistic != kBin) return std::string(row.statistic);
  char text[64] = "bin:";
  char* end = std::to_chars(text + 4, text + 30, row.low, std::chars_format::general, 9).ptr;
  *end++ = ':';
  end = std::to_chars(end, text + sizeof text, row.high, std::chars_format::general, 9).ptr;
  return std::string(text, end);
}

StatsRecorder::StatsRecorder(StatsOptions options) : options_(options) {
  if (options_.bins < 1) throw Error(cat("StatsRecorder: bins must be at least 1, got ", options_.bins));
  if (!(options_.saturation >= 0.0f))
    throw Error(cat("StatsRecorder: saturation must be a number >= 0, got ", options_.saturation));
  if (!(options_.output_range >= 0.0f) || !(options_.grad_range >= 0.0f))
    throw Error(cat("StatsRecorder: a histogram range must be >= 0 (0: the values' min..max), got ",
                    options_.output_range, " and ", options_.grad_range));
}

StatsRecorder::~StatsRecorder() { disarm(); }

std::string_view StatsRecorder::keep(const std::string& name) { return names_->emplace_back(name); }

void StatsRecorder::add(std::string_view layer, std::string_view quantity, std::string_view statistic, double value) {
  rows_.push_back({step_, layer, quantity, statistic, value});
}

void StatsRecorder::add(std::string_view layer, std::string_view quantity, const TensorStats& s, bool saturation) {
  add(layer, quantity, "mean", s.mean);
  add(layer, quantity, "std", s.std);
  if (saturation) add(layer, quantity, "saturated", s.saturated);
  const Histogram& h = s.histogram;
  const double width = (h.high - h.low) / double(h.density.size());
  for (size_t b = 0; b < h.density.size(); ++b)
    rows_.push_back(
        {step_, layer, quantity, kBin, h.density[b], h.low + double(b) * width, h.low + double(b + 1) * width});
}

void StatsRecorder::watch_output(const std::string& name, nn::Module& layer) {
  outputs_.push_back({keep(name), &layer});
  if (armed_) hook(outputs_.back());
}

void StatsRecorder::hook(const Output& output) {
  const std::string_view name = output.name;
  hooks_.push_back(output.layer->register_forward_hook([this, name](nn::Module&, const Tensor&, const Tensor& out) {
    if (out.numel() == 0) return;
    add(name, "output", describe(out, options_.saturation, {options_.bins, options_.output_range}), true);
    if (!out.requires_grad()) return;
    // The hook lives on this step's graph and dies with it.
    out.register_hook([this, name](const Tensor& grad) {
      add(name, "output_grad", describe(grad, options_.saturation, {options_.bins, options_.grad_range}), false);
    });
  }));
}

void StatsRecorder::watch_parameter(const std::string& name, const Tensor& parameter) {
  if (!parameter.defined()) throw Error(cat("StatsRecorder::watch_parameter: \"", name, "\" is an undefined tensor"));
  parameters_.push_back({.name = keep(name), .value = parameter, .before = Tensor(), .copied = false, .data_std = 0.0});
}

void StatsRecorder::watch_parameters(const nn::Module& model) {
  for (const auto& [name, value] : model.named_parameters()) watch_parameter(name, value);
}

void StatsRecorder::arm(int64_t step) {
  step_ = step;
  if (armed_) return;
  armed_ = true;
  for (const Output& output : outputs_) hook(output);
}

void StatsRecorder::disarm() {
  for (RemovableHandle& hook : hooks_) hook.remove();
  hooks_.clear();
  for (Parameter& p : parameters_) p.copied = false;  // a copy belongs to its step
  armed_ = false;
}

void StatsRecorder::before_update() {
  if (!armed_) return;
  NoGradGuard no_grad;
  for (Parameter& p : parameters_) {
    p.data_std = standard_deviation(p.value);
    // The copy goes into the buffer of the last one (a parameter keeps its shape).
    if (p.before.defined() && p.before.shape() == p.value.shape()) p.before.copy_(p.value);
    else p.before = p.value.detach().clone();
    p.copied = true;
    add(p.name, "parameter", "data_std", p.data_std);
    const Tensor grad = p.value.grad();
    if (!grad.defined()) continue;
    const double grad_std = standard_deviation(grad);
    add(p.name, "parameter", "grad_std", grad_std);
    add(p.name, "parameter", "grad_to_data", grad_std / p.data_std);
  }
}

void StatsRecorder::after_update() {
  if (!armed_) return;
  NoGradGuard no_grad;
  for (Parameter& p : parameters_) {
    if (!p.copied || p.before.shape() != p.value.shape()) continue;
    // The update, after - before, in place of the copy (both contiguous, of one shape).
    float* update = p.before.data();
    const float* after = p.value.data();
    const int64_t n = p.before.numel();
    for (int64_t i = 0; i < n; ++i) update[i] = after[i] - update[i];
    const double update_std = standard_deviation(p.before);
    add(p.name, "parameter", "update_std", update_std);
    add(p.name, "parameter", "update_to_data", update_std / p.data_std);
    p.copied = false;
  }
  disarm();
}

}  // namespace minidl::diagnostics
