// 8. A bias right before BatchNorm is redundant; before LayerNorm it is not removed.
#include "experiments/experiments.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/reduce.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kRounding = 1e-5;  // outputs near 1 and gradients: float rounding
constexpr double kVisible = 1e-3;   // a difference that is not rounding

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, double(std::fabs(t.data()[i])));
  return m;
}

std::shared_ptr<nn::Module> make_norm(NormKind norm) {
  if (norm == NormKind::Batch) return std::make_shared<nn::BatchNorm1d>(64);
  return std::make_shared<nn::LayerNorm>(nn::LayerNormOptions{.normalized_shape = {64}});
}

class BiasBeforeNormExperiment : public Experiment {
 public:
  BiasBeforeNormExperiment()
      : Experiment({"bias_before_norm", "A bias before BatchNorm is redundant",
                    "BatchNorm subtracts the per-channel batch mean, which removes any per-channel constant, so a bias "
                    "right before it is redundant; before LayerNorm a per-feature bias is not removed",
                    "study guide, \"Traps\" (a D2L exercise)"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "Exact part: Linear(64, 64) with its bias (uniform in +-1/8 as drawn) and the same Linear without "
        "one, each followed by a fresh BatchNorm1d(64) in training mode or LayerNorm(64), on a random (32, 64) "
        "batch per seed; the loss sum(y * r) with a random r for the gradients. Training part: the lesson's "
        "network (",
        lesson_training(s).epochs, " epoch(s)) with and without the bias of each Linear before a norm layer.");
  }
  std::string rule() const override {
    return cat("held when, on every seed, before BatchNorm the outputs with and without the bias differ by at most ",
               kRounding, " and the bias gradient is at most ", kRounding,
               " times the largest weight gradient, while before LayerNorm the outputs differ by more than ", kVisible,
               " and the bias gradient exceeds ", kVisible,
               "; held partly when only the BatchNorm or only the LayerNorm part holds; else did not hold. The "
               "training table is shown, not judged.",
               exact_rule());
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (NormKind norm : {NormKind::Batch, NormKind::Layer})
      append(jobs, seed_jobs(c.settings.seeds, 100.0, [norm](uint64_t seed) {
               const BiasBeforeNorm m = measure_bias_before_norm(norm, seed);
               return Record{{"part", "exact"},
                             {"norm", lesson::short_name(norm)},
                             {"seed", double(seed)},
                             {"output_difference", m.output_difference},
                             {"bias_gradient", m.bias_gradient},
                             {"weight_gradient", m.weight_gradient}};
             }));
    for (NormKind norm : {NormKind::Batch, NormKind::Layer})
      for (bool bias : {true, false})
        for (uint64_t seed : c.settings.seeds) {
          lesson::TrainOptions o = lesson_run(c.settings, norm, seed);
          o.net.bias_before_norm = bias;
          jobs.push_back(train_job(c, o, Record().set("part", "training").set("bias", bias ? "yes" : "no")));
        }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    bool batch_part = true, layer_part = true;
    for (const Record& r : where(records, {{"part", "exact"}, {"norm", "batch"}}))
      batch_part = batch_part && r.num("output_difference") <= kRounding &&
                   r.num("bias_gradient") <= kRounding * r.num("weight_gradient");
    for (const Record& r : where(records, {{"part", "exact"}, {"norm", "layer"}}))
      layer_part = layer_part && r.num("output_difference") > kVisible && r.num("bias_gradient") > kVisible;
    return {verdict_of({truth_of(batch_part), truth_of(layer_part)}),
            cat("Before BatchNorm the bias ",
                batch_part ? "changes nothing beyond rounding and gets no gradient" : "was not removed by this rule",
                "; before LayerNorm it ", layer_part ? "changes the outputs and gets a gradient" : "was removed", ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> bars;
    for (NormKind norm : {NormKind::Batch, NormKind::Layer}) {
      const auto mine = where(records, {{"part", "exact"}, {"norm", lesson::short_name(norm)}});
      const lesson::Spread diff = spread(mine, "output_difference"), grad = spread(mine, "bias_gradient"),
                           wgrad = spread(mine, "weight_gradient");
      rows.push_back({lesson::display_name(norm), sci(diff.min) + " to " + sci(diff.max),
                      sci(grad.min) + " to " + sci(grad.max), sci(wgrad.min) + " to " + sci(wgrad.max)});
      bars.push_back({norm == NormKind::Batch ? 0.0 : 1.0, std::max(diff.max, 1e-12), std::max(grad.max, 1e-12)});
    }
    std::string table =
        "Exact part, over seeds:\n\n" + markdown_table({"norm after the Linear", "max output difference, bias vs none",
                                                        "max bias gradient", "max weight gradient"},
                                                       rows);
    std::vector<std::vector<std::string>> train_rows;
    for (NormKind norm : {NormKind::Batch, NormKind::Layer})
      for (const char* bias : {"yes", "no"}) {
        const auto mine = where(records, {{"part", "training"}, {"norm", lesson::short_name(norm)}, {"bias", bias}});
        train_rows.push_back({lesson::display_name(norm), bias, mean_range(spread(mine, "train_loss")),
                              mean_range(spread(mine, "val_accuracy"))});
      }
    table += "\nTraining part, mean [min, max] over seeds:\n\n" +
             markdown_table({"norm", "bias before it", "training loss", "val accuracy"}, train_rows);
    const std::string script =
        datablock("d", bars) +
        "set title 'A bias before the norm: output difference and bias gradient (largest over seeds)'\n"
        "set logscale y\nset yrange [1e-13:10]\nset style fill solid 0.6\nset boxwidth 0.35\n"
        "set xtics ('Linear + BatchNorm1d' 0, 'Linear + LayerNorm' 1)\nset key top left\n"
        "plot $d using ($1-0.18):2 with boxes title 'output difference, with vs without bias', "
        "$d using ($1+0.18):3 with boxes title 'largest bias gradient'\n";
    return {table, {draw_plot(s.out_dir, "bias_before_norm.png", script, 800, 460)}};
  }
};

}  // namespace

BiasBeforeNorm measure_bias_before_norm(NormKind norm, uint64_t seed) {
  if (norm != NormKind::Batch && norm != NormKind::Layer)
    throw Error(cat("measure_bias_before_norm compares batch and layer, got ", lesson::short_name(norm)));
  Generator gen(seed);
  nn::Linear with_bias(64, 64, gen);
  nn::Linear without_bias(nn::LinearOptions(64, 64).bias(false), gen);
  {
    NoGradGuard no_grad;  // a copy of the values, not a step of the graph
    without_bias.weight.copy_(with_bias.weight);
  }
  const Tensor x = Tensor::randn({32, 64}, gen);  // (N, in)
  const Tensor r = Tensor::randn({32, 64}, gen);  // a random projection, so every output gets a gradient
  auto norm_a = make_norm(norm), norm_b = make_norm(norm);
  norm_a->train();
  norm_b->train();
  const Tensor y_with = (*norm_a)(with_bias(x));        // (N, 64)
  const Tensor y_without = (*norm_b)(without_bias(x));  // (N, 64)
  BiasBeforeNorm m{norm, 0.0, 0.0, 0.0};
  m.output_difference = max_abs(y_with.detach() - y_without.detach());
  sum(y_with * r).backward();
  m.bias_gradient = max_abs(with_bias.bias.grad());
  m.weight_gradient = max_abs(with_bias.weight.grad());
  return m;
}

std::shared_ptr<const Experiment> bias_before_norm_experiment() { return std::make_shared<BiasBeforeNormExperiment>(); }

}  // namespace minidl::lab
