// 7. Batch mates leak into BatchNorm's training-mode output, not into LayerNorm's.
#include "experiments/experiments.hpp"
#include "minidl/ops/shape_ops.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kLeak = 1e-3;      // BatchNorm's output must move at least this much
constexpr double kRounding = 1e-5;  // the others may move at most this much (float rounding of outputs near 1)

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

// The output row of example 0 (the first row of `batch`).
std::vector<float> first_output(nn::Module& model, const Tensor& X, const std::vector<int64_t>& batch) {
  std::vector<float> out = model(select_rows(X, batch)).to_vector();
  out.resize(out.size() / batch.size());
  return out;
}

std::vector<NormKind> norms() { return {NormKind::Batch, NormKind::Layer, NormKind::RMS, NormKind::Group}; }

class BatchMatesExperiment : public Experiment {
 public:
  BatchMatesExperiment()
      : Experiment(
            {"batch_mates", "Batch mates leak into BatchNorm",
             "one example's training-mode output under BatchNorm depends on its batch mates; LayerNorm (and RMSNorm, "
             "GroupNorm) behave the same in training and in use, at any batch size",
             "study guide, \"Focus on\"; lesson, \"Why transformers use layer norm\"; Layer Normalization note"}) {}
  std::string setup(const Settings&) const override {
    return "The lesson's network, freshly initialized from each seed, in training mode: the logits of training "
           "example 0 in 8 random batches of 64 (63 random batch mates each), then the same example in a batch of 2 "
           "and of 1 (training mode; BatchNorm only in eval mode at 1) and in eval mode. Spread: the largest "
           "(max - min) over the 10 logits across the 8 batches; train/eval and batch-size differences: the "
           "largest absolute difference of a logit.";
  }
  std::string rule() const override {
    return cat("held when BatchNorm's spread over batch mates exceeds ", kLeak,
               " on every seed and, for LayerNorm, RMSNorm and GroupNorm on every seed, the spread, the train/eval "
               "difference and the batch-size difference are all at most ",
               kRounding, " (float rounding); held partly when only one of the two parts holds; else did not hold.",
               exact_rule());
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (NormKind norm : norms())
      append(jobs, seed_jobs(c.settings.seeds, 2000.0, [&c, norm](uint64_t seed) {
               const BatchMates m = measure_batch_mates(c.data, norm, seed);
               return Record{{"norm", lesson::short_name(norm)},         {"seed", double(seed)},
                             {"spread_over_mates", m.spread_over_mates}, {"train_vs_eval", m.train_vs_eval},
                             {"across_batch_sizes", m.across_sizes},     {"bitwise", m.bitwise ? 1.0 : 0.0}};
             }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    bool leaks = true, stable = true;
    for (NormKind norm : norms()) {
      const auto mine = of_norm(records, norm);
      const lesson::Spread mates = spread(mine, "spread_over_mates"), mode = spread(mine, "train_vs_eval"),
                           sizes = spread(mine, "across_batch_sizes");
      if (norm == NormKind::Batch) leaks = mates.min > kLeak;
      else stable = stable && mates.max <= kRounding && mode.max <= kRounding && sizes.max <= kRounding;
    }
    return {verdict_of({truth_of(leaks), truth_of(stable)}),
            cat("BatchNorm's output ", leaks ? "moves" : "does not move enough", " with its batch mates; ",
                stable ? "LayerNorm, RMSNorm and GroupNorm stay within float rounding (see the bit-for-bit column)"
                       : "a per-example norm moved more than float rounding",
                ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> bars;
    for (NormKind norm : norms()) {
      const auto mine = of_norm(records, norm);
      const lesson::Spread mates = spread(mine, "spread_over_mates"), mode = spread(mine, "train_vs_eval"),
                           sizes = spread(mine, "across_batch_sizes"), bits = spread(mine, "bitwise");
      rows.push_back(
          {lesson::display_name(norm), sci(mates.max), sci(mode.max), sci(sizes.max), bits.min == 1.0 ? "yes" : "no"});
      bars.push_back({double(bars.size()), std::max(mates.max, 1e-12)});
    }
    const std::string table =
        "Largest over seeds:\n\n" + markdown_table({"norm", "spread over batch mates", "train vs eval",
                                                    "batch of 64 vs 2 and 1", "mates and mode bit for bit"},
                                                   rows);
    const std::string script =
        datablock("spread", bars) +
        "set title \"One example's training-mode logits as its batch mates change (largest spread; 1e-12 = none)\"\n"
        "set logscale y\nset yrange [1e-13:10]\nset style fill solid 0.6\nset boxwidth 0.6\nunset key\n"
        "set ylabel 'max - min of a logit across 8 batches'\n"
        "set xtics ('BatchNorm1d' 0, 'LayerNorm' 1, 'RMSNorm' 2, 'GroupNorm' 3)\n"
        "plot $spread using 1:2 with boxes lc rgb '#aa4455'\n";
    return {table, {draw_plot(s.out_dir, "batch_mates.png", script, 800, 460)}};
  }
};

}  // namespace

BatchMates measure_batch_mates(const data::DigitsSplit& data, NormKind norm, uint64_t seed, int batches) {
  Generator gen(seed);
  auto model = lesson::deep_net(norm, {}, gen);
  NoGradGuard no_grad;
  model->train();
  const Tensor& X = data.X_train;
  const int64_t n = X.size(0);
  // Random batches of 64: example 0 first, then 63 others drawn from the generator.
  std::vector<std::vector<float>> outputs;
  std::vector<int64_t> first_batch;
  for (int b = 0; b < batches; ++b) {
    std::vector<int64_t> rows{0};
    const Tensor picks = Tensor::randint(1, n, {63}, gen);
    for (int64_t i = 0; i < 63; ++i) rows.push_back(int64_t(picks.data()[i]));
    if (b == 0) first_batch = rows;
    outputs.push_back(first_output(*model, X, rows));
  }
  BatchMates m{norm, 0.0, 0.0, 0.0, true};
  for (size_t k = 0; k < outputs.front().size(); ++k) {
    float low = outputs[0][k], high = outputs[0][k];
    for (const auto& o : outputs) low = std::min(low, o[k]), high = std::max(high, o[k]);
    m.spread_over_mates = std::max(m.spread_over_mates, double(high - low));
  }
  const std::vector<float> in_64 = outputs.front();
  const std::vector<float> in_2 = first_output(*model, X, {0, first_batch[1]});
  model->eval();
  const std::vector<float> eval_64 = first_output(*model, X, first_batch);
  const std::vector<float> eval_1 = first_output(*model, X, {0});
  m.train_vs_eval = max_difference(in_64, eval_64);
  m.across_sizes = std::max(max_difference(in_64, in_2), max_difference(eval_64, eval_1));
  if (norm != NormKind::Batch) {  // training mode at batch size 1 (BatchNorm refuses it)
    model->train();
    m.across_sizes = std::max(m.across_sizes, max_difference(in_64, first_output(*model, X, {0})));
  }
  m.bitwise = m.spread_over_mates == 0.0 && m.train_vs_eval == 0.0;
  return m;
}

std::shared_ptr<const Experiment> batch_mates_experiment() { return std::make_shared<BatchMatesExperiment>(); }

}  // namespace minidl::lab
