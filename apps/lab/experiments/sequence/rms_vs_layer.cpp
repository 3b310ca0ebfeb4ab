// Sequence chapter, 6. RMSNorm against LayerNorm in charlm: the validation loss over seeds,
// and the cost of the norm layer itself, timed alternately in one process (Zhang and Sennrich 2019).
#include <time.h>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "minidl/threads.hpp"

namespace minidl::lab {

namespace {

using charlm::NormKind;

constexpr double kLossTolerance = 0.03;  // nats: "as well" means at most this much worse
constexpr double kLossFloor = 0.01;      // nats: the margin's floor
constexpr double kRatioFloor = 0.05;     // of the time ratio: the margin's floor
constexpr int kTimingPairs = 101;        // cheap (about 0.1 s in all): the same with --quick
constexpr int kTimingRepeats = 20;

int64_t steps(const Settings& s) { return s.quick ? 12 : 600; }
std::vector<NormKind> norms() { return {NormKind::Layer, NormKind::RMS}; }

// CPU time of the calling thread: unlike the wall clock, it does not count the time other
// work (the lab's other jobs, other tests) holds the core, so the ratio keeps its value under load.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// One norm layer's forward and backward on x, `repeats` times, in CPU seconds of this thread.
double time_norm(nn::Module& norm, const Tensor& x, const Tensor& grad, int repeats) {
  const double start = thread_cpu_seconds();
  for (int i = 0; i < repeats; ++i) norm(x).backward(grad);
  return thread_cpu_seconds() - start;
}

// Holds this thread's OpenMP count at one while the norm layers are timed: the thread's CPU
// time then holds all their work.
class OneThread {
 public:
  OneThread() : threads_(get_num_threads()) { set_num_threads(1); }
  ~OneThread() { set_num_threads(threads_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int threads_;
};

}  // namespace

NormCost measure_norm_cost(int pairs, int repeats) {
  const OneThread one_thread;
  Generator gen(0);
  const Tensor x = Tensor::randn({32, 16, 64}, gen).requires_grad_(true);  // (B, T, C): a batch of charlm's
  const Tensor grad = Tensor::randn({32, 16, 64}, gen);
  nn::LayerNorm layer(64);
  nn::RMSNorm rms(64);
  std::vector<double> ratios;
  NormCost cost;
  for (int p = 0; p < pairs; ++p) {
    // Alternate which goes first, so a load change in the middle of a pair falls on both.
    const bool layer_first = p % 2 == 0;
    const double a = time_norm(layer_first ? static_cast<nn::Module&>(layer) : rms, x, grad, repeats);
    const double b = time_norm(layer_first ? static_cast<nn::Module&>(rms) : layer, x, grad, repeats);
    const double layer_s = layer_first ? a : b, rms_s = layer_first ? b : a;
    ratios.push_back(rms_s / layer_s);
    cost.layer_us = std::min(cost.layer_us, 1e6 * layer_s / repeats);
    cost.rms_us = std::min(cost.rms_us, 1e6 * rms_s / repeats);
  }
  std::nth_element(ratios.begin(), ratios.begin() + ptrdiff_t(ratios.size() / 2), ratios.end());
  cost.median_ratio = ratios[ratios.size() / 2];
  return cost;
}

namespace {

Record run_with_cost(const Context& c, const charlm::RunOptions& o) {
  Record r = charlm_record(c, o);
  const NormCost cost = measure_norm_cost(kTimingPairs, kTimingRepeats);
  return r.set("layer_norm_us", cost.layer_us).set("rms_norm_us", cost.rms_us).set("rms_over_layer", cost.median_ratio);
}

class RmsVsLayer : public Experiment {
 public:
  RmsVsLayer()
      : Experiment({"rms_vs_layer", "RMSNorm against LayerNorm in charlm",
                    "RMSNorm, which drops LayerNorm's centering and bias, is cheaper and trains as well",
                    "chapter 34; Zhang and Sennrich 2019"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm at makemore's defaults (4 layers, 4 heads, width 64, pre-norm, AdamW lr 5e-4, batch 32) "
        "with LayerNorm or RMSNorm, ",
        steps(s),
        " steps, the validation loss in eval mode at the end, seeds paired. After each run, in the same "
        "process, a LayerNorm(64) and an RMSNorm(64) alone run forward and backward on a (32, 16, 64) "
        "batch, ",
        kTimingRepeats, " times each, in alternating order, ", kTimingPairs,
        " pairs, on one thread: the median of RMSNorm's CPU time over LayerNorm's. The time per training step is a "
        "figure only: it "
        "moves with the machine's load.",
        s.quick ? " --quick: a few steps and one seed, which only proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat("(a) trains as well: RMSNorm's validation loss minus LayerNorm's, seed by seed, is on average below ",
               kLossTolerance,
               " nats (a diverged run counting ln 27); (b) cheaper: the median time ratio of the norm "
               "layers, RMSNorm over LayerNorm, is on average over the runs below 1. Held: both; held partly: one; "
               "did not hold: neither.",
               margin_rule(cat(kLossFloor, " nats of loss and ", kRatioFloor, " of the ratio")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return charlm_jobs(c, charlm_training(c.settings, steps(c.settings), steps(c.settings)), norms(),
                       [&c](const charlm::RunOptions& o) { return run_with_cost(c, o); });
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto layer = where(records, {{"norm", "layer"}}), rms = where(records, {{"norm", "rms"}});
    const Comparison loss =
        compare_to_threshold(paired_differences(rms, layer, "val_loss", kUniformLoss), kLossTolerance, kLossFloor);
    const Comparison ratio = compare_to_threshold(values_of(records, "rms_over_layer"), 1.0, kRatioFloor);
    const Truth as_well = below(loss), cheaper = below(ratio);
    return {verdict_of({as_well, cheaper}),
            cat("RMSNorm's validation loss minus LayerNorm's: ", comparison_text(loss, 4), " nats (",
                truth_text(as_well, "as well", "worse"), "); the norm layer's time, RMSNorm over LayerNorm: ",
                comparison_text(ratio), " (", truth_text(cheaper, "cheaper", "not cheaper"),
                "). Time per training step, median over seeds (load-dependent, not judged): LayerNorm ",
                fixed(median_ms(layer), 1), " ms, RMSNorm ", fixed(median_ms(rms), 1), " ms.")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    for (NormKind norm : norms()) {
      const auto runs = where(records, {{"norm", charlm::short_name(norm)}});
      rows.push_back({charlm::short_name(norm), mean_range(spread(runs, "val_loss")),
                      mean_range(spread(runs, "train_loss")), fixed(median_ms(runs), 1),
                      mean_range(spread(runs, norm == NormKind::Layer ? "layer_norm_us" : "rms_norm_us"), 1)});
    }
    const std::string table =
        "Mean [min, max] over seeds; time per step is the median over seeds; the norm layer's forward and backward "
        "is the fastest of its timed repeats in each run:\n\n" +
        markdown_table({"norm", "validation loss", "training loss", "ms per step", "norm layer fwd+bwd (us)"}, rows) +
        cat("\nRMSNorm's time over LayerNorm's (median of alternating pairs), mean [min, max] over runs: ",
            mean_range(spread(records, "rms_over_layer")), ".\n");
    return {table, {draw(s.out_dir, "rms_vs_layer.png", picture(records, s))}};
  }

 private:
  static double median_ms(std::vector<Record> runs) {
    std::vector<double> ms;
    for (const Record& r : runs)
      if (!std::isnan(r.num("ms_per_step"))) ms.push_back(r.num("ms_per_step"));
    if (ms.empty()) return std::nan("");
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
  /// Left: the validation loss per seed, a line per norm. Right: the time ratio per run.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script = two_panels("rms_vs_layer.png", "RMSNorm against LayerNorm in charlm");
    std::string plots;
    const char* const colours[] = {"#d95f02", "#7570b3"};
    for (size_t n = 0; n < norms().size(); ++n) {
      std::vector<std::vector<double>> rows;
      for (const Record& r : where(records, {{"norm", charlm::short_name(norms()[n])}}))
        rows.push_back({r.num("seed"), r.num("val_loss")});
      script += datablock(cat("loss", n), rows);
      plots += cat(n ? ", " : "plot ", "$loss", n, " using 1:2 with linespoints lw 2 pt 7 lc rgb '", colours[n],
                   "' title '", charlm::short_name(norms()[n]), "'");
    }
    script +=
        cat("set title 'validation loss after ", steps(s),
            " steps, per seed'\nset xlabel 'seed'\nset ylabel 'nats'\nset xtics 1\nset xrange [",
            double(*std::min_element(s.seeds.begin(), s.seeds.end())) - 0.5, ":",
            double(*std::max_element(s.seeds.begin(), s.seeds.end())) + 0.5, "]\nset key top right\n", plots, "\n");
    std::vector<std::vector<double>> ratios;
    for (size_t i = 0; i < records.size(); ++i) ratios.push_back({double(i), records[i].num("rms_over_layer")});
    return script + datablock("ratio", ratios) +
           cat("set title 'norm layer fwd+bwd time, RMSNorm / LayerNorm (median of pairs)'\nset xlabel 'run'\n"
               "set ylabel 'ratio'\nset xrange [-0.5:",
               double(records.size()) - 0.5,
               "]\nset yrange [0:*]\nunset key\n"
               "plot $ratio using 1:2 with points pt 7 ps 1.5 lc rgb '#7570b3', 1 with lines lc 'black' dt 2\n"
               "unset multiplot\n");
  }
};

}  // namespace

std::shared_ptr<const Experiment> rms_vs_layer_experiment() { return std::make_shared<RmsVsLayer>(); }

}  // namespace minidl::lab
