// Sequence chapter, 3. Padding and batch statistics: what the first norm layer of charlm sees
// at every training step, with random batches (much padding) and length-sorted ones (little),
// for BatchNorm over every position, BatchNorm over the real tokens, LayerNorm and RMSNorm
// (Shen et al. 2020's measure).
#include <chrono>
#include <numeric>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "grid.hpp"

namespace minidl::lab {

namespace {

using charlm::NormKind;

constexpr int64_t kWidth = 32;  // small: the claim is about the first norm's input
constexpr int64_t kLayers = 2;
constexpr double kLossFloor = 0.02;       // nats
constexpr double kDeviationFloor = 0.02;  // of the running standard deviation
constexpr double kVisible = 1e-2;         // a logit moved this much: padding changed the output
constexpr double kRounding = 1e-4;        // below this: float rounding of differently shaped products

int64_t steps(const Settings& s) { return s.quick ? 12 : 600; }
/// The first steps left out of the per-step means: the running statistics start at 0 and 1
/// and forget them at momentum 0.1 within about 20 steps.
int64_t burn_in(const Settings& s) { return s.quick ? 2 : 50; }
std::vector<NormKind> norms() { return {NormKind::Batch, NormKind::BatchMasked, NormKind::Layer, NormKind::RMS}; }
std::vector<std::string> orders() { return {"random", "sorted"}; }
/// charlm's training, small: kWidth channels, kLayers blocks, steps(s) steps.
charlm::RunOptions small_training(const Settings& s) {
  charlm::RunOptions o = charlm_training(s, steps(s), steps(s));
  o.model.width = kWidth;
  o.model.layers = kLayers;
  return o;
}
bool has_batch_statistics(NormKind norm) { return norm == NormKind::Batch || norm == NormKind::BatchMasked; }

/// Batches of training-split word indices: a random permutation cut in chunks, or the words
/// sorted by length (ties in random order) cut in chunks whose order is then shuffled.
std::vector<std::vector<int64_t>> batches(const charlm::WordSplit& words, const std::string& order, uint64_t seed,
                                          int64_t batch_size) {
  Generator gen(seed ^ 0xba7c4e5ULL);
  std::vector<int64_t> picks = words.train;
  auto shuffle = [&gen](auto& v) {
    for (size_t i = v.size() - 1; i > 0; --i) std::swap(v[i], v[gen.below(uint64_t(i) + 1)]);
  };
  shuffle(picks);
  if (order == "sorted")
    std::stable_sort(picks.begin(), picks.end(), [&](int64_t a, int64_t b) {
      return words.words[size_t(a)].size() < words.words[size_t(b)].size();
    });
  std::vector<std::vector<int64_t>> out;
  for (size_t start = 0; start + size_t(batch_size) <= picks.size(); start += size_t(batch_size))
    out.emplace_back(picks.begin() + ptrdiff_t(start), picks.begin() + ptrdiff_t(start) + batch_size);
  if (order == "sorted") shuffle(out);
  return out;
}

/// Per channel mean and biased variance of the rows of x (N, C) listed in rows.
struct ChannelStats {
  std::vector<double> mean, var;
};
ChannelStats channel_stats(const std::vector<float>& x, int64_t channels, const std::vector<int64_t>& rows) {
  ChannelStats s{std::vector<double>(size_t(channels), 0.0), std::vector<double>(size_t(channels), 0.0)};
  for (int64_t r : rows)
    for (int64_t c = 0; c < channels; ++c) s.mean[size_t(c)] += x[size_t(r * channels + c)];
  for (double& m : s.mean) m /= double(rows.size());
  for (int64_t r : rows)
    for (int64_t c = 0; c < channels; ++c) {
      const double d = x[size_t(r * channels + c)] - s.mean[size_t(c)];
      s.var[size_t(c)] += d * d;
    }
  for (double& v : s.var) v /= double(rows.size());
  return s;
}

/// Mean over channels of |a's mean - b's mean| / b's standard deviation, and of
/// |a's variance / b's variance - 1|.
std::pair<double, double> deviation(const ChannelStats& a, const std::vector<double>& b_mean,
                                    const std::vector<double>& b_var) {
  double mean_dev = 0.0, var_dev = 0.0;
  for (size_t c = 0; c < a.mean.size(); ++c) {
    mean_dev += std::fabs(a.mean[c] - b_mean[c]) / std::sqrt(b_var[c] + 1e-5);
    var_dev += std::fabs(a.var[c] / (b_var[c] + 1e-5) - 1.0);
  }
  return {mean_dev / double(a.mean.size()), var_dev / double(a.mean.size())};
}

std::vector<double> as_doubles(const Tensor& t) {
  const std::vector<float> v = t.to_vector();
  return {v.begin(), v.end()};
}

/// The per-step figures of the first norm layer's input, summed after the burn-in.
struct StepFigures {
  double pad_share = 0, padding_dev = 0, running_mean_dev = 0, running_var_dev = 0;
  int64_t counted = 0;
  double mean(double sum) const { return counted ? sum / double(counted) : std::nan(""); }
};

/// The largest change of a real position's logit, in training mode, when the batch of the
/// first 32 validation words is padded to the block size instead of to its longest word.
double padding_sensitivity(charlm::CharTransformer& model, const charlm::WordSplit& words) {
  NoGradGuard no_grad;
  model.train();
  const std::vector<int64_t> picks(words.val.begin(), words.val.begin() + 32);
  const charlm::Batch tight = charlm::make_batch(words.words, picks);
  const charlm::Batch padded = charlm::make_batch(words.words, picks, model.options().block_size);
  const std::vector<float> a = model.forward(tight.x, tight.mask).to_vector();    // (B, T, V)
  const std::vector<float> b = model.forward(padded.x, padded.mask).to_vector();  // (B, T', V)
  const int64_t t = tight.x.size(1), t_padded = padded.x.size(1), v = charlm::kVocabSize;
  double largest = 0.0;
  for (size_t i = 0; i < picks.size(); ++i)
    for (int64_t j = 0; j <= int64_t(words.words[size_t(picks[i])].size()); ++j)
      for (int64_t k = 0; k < v; ++k)
        largest = std::max(largest, double(std::fabs(a[size_t((int64_t(i) * t + j) * v + k)] -
                                                     b[size_t((int64_t(i) * t_padded + j) * v + k)])));
  return largest;
}

}  // namespace

nn::Module& submodule(nn::Module& root, const std::string& dotted_name) {
  nn::Module* m = &root;
  std::string rest = dotted_name;
  while (!rest.empty()) {
    const size_t dot = rest.find('.');
    const std::string name = rest.substr(0, dot);
    rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
    const auto children = m->named_children();
    const auto it = std::find_if(children.begin(), children.end(), [&](const auto& c) { return c.first == name; });
    if (it == children.end())
      throw Error(cat("submodule: ", root.type_name(), " has no module \"", dotted_name, "\" (no \"", name, "\")"));
    m = it->second.get();
  }
  return *m;
}

Record measure_padding_stats(const Context& c, NormKind norm, const std::string& order, uint64_t seed) {
  charlm::RunOptions o = small_training(c.settings);
  o.model.norm = norm;
  Generator init(seed);
  charlm::CharTransformer model(o.model, init);
  auto optimizer = lesson::make_optimizer(o.trainer, o.lr, model.parameters());
  nn::Module& first_norm = submodule(model, "transformer.h.0.ln_1");
  auto* batch_norm = dynamic_cast<nn::BatchNormBase*>(&first_norm);
  const charlm::Batch* current = nullptr;
  StepFigures f;
  int64_t step = 0;
  // Before the norm's forward: its input (B, T, C) and, for BatchNorm, the running statistics
  // this step's batch statistics are about to update.
  auto handle = first_norm.register_forward_pre_hook([&](nn::Module&, const Tensor& x) {
    if (!model.is_training() || step <= burn_in(c.settings)) return;
    const int64_t channels = x.size(-1), positions = x.numel() / channels;
    const std::vector<float> values = x.to_vector();  // (B * T, C)
    std::vector<int64_t> all(static_cast<size_t>(positions)), real;
    std::iota(all.begin(), all.end(), int64_t(0));
    for (float r : current->mask.real_rows.to_vector()) real.push_back(int64_t(r));
    const ChannelStats over_all = channel_stats(values, channels, all),
                       over_real = channel_stats(values, channels, real);
    f.pad_share += 1.0 - double(real.size()) / double(positions);
    f.padding_dev += deviation(over_all, over_real.mean, over_real.var).first;
    if (batch_norm) {
      const auto [mean_dev, var_dev] =
          deviation(norm == NormKind::Batch ? over_all : over_real, as_doubles(batch_norm->running_mean),
                    as_doubles(batch_norm->running_var));
      f.running_mean_dev += mean_dev;
      f.running_var_dev += var_dev;
    }
    ++f.counted;
  });
  const auto started = std::chrono::steady_clock::now();
  const auto order_of_batches = batches(c.words, order, seed, o.batch_size);
  std::string status = "ok";
  for (step = 1; step <= o.steps && status == "ok"; ++step) {
    const charlm::Batch batch = charlm::make_batch(c.words.words, order_of_batches[size_t(step - 1)]);
    current = &batch;
    const Tensor logits = model.forward(batch.x, batch.mask);  // (B, T, V)
    const Tensor loss = cross_entropy(logits.reshape({-1, charlm::kVocabSize}), batch.y, {.ignore_index = -1});
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    if (!std::isfinite(loss.item())) status = "diverged";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  handle.remove();
  const bool ok = status == "ok";
  const double nan = std::nan("");
  Record r;
  r.set("norm", charlm::short_name(norm)).set("order", order).set("seed", double(seed)).set("status", status);
  r.set("steps", double(o.steps)).set("pad_share", f.mean(f.pad_share)).set("padding_dev", f.mean(f.padding_dev));
  r.set("running_mean_dev", batch_norm ? f.mean(f.running_mean_dev) : nan);
  r.set("running_var_dev", batch_norm ? f.mean(f.running_var_dev) : nan);
  r.set("val_loss", ok ? double(charlm::evaluate(model, c.words.words, c.words.val)) : nan);
  r.set("padding_sensitivity", ok ? padding_sensitivity(model, c.words) : nan);
  r.set("ms_per_step", 1e3 * seconds / double(o.steps));
  return r;
}

namespace {

std::vector<Record> runs_of(const std::vector<Record>& records, NormKind norm, const std::string& order) {
  return where(records, {{"norm", charlm::short_name(norm)}, {"order", order}});
}

class PaddingStats : public Experiment {
 public:
  PaddingStats()
      : Experiment({"padding_stats", "Padding and batch statistics in charlm",
                    "batch statistics over padded positions are statistics of the padding: BatchNorm over every "
                    "position normalizes real tokens by what the padding does, LayerNorm and RMSNorm are untouched",
                    "Layer Normalization note, \"Why transformers use it\"; study guide; Shen et al. 2020"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm at width ", kWidth, ", ", kLayers, " layers, 4 heads, pre-norm, AdamW lr 5e-4, batch 32, ", steps(s),
        " steps, with BatchNorm over every position (batch), BatchNorm over the real tokens only (batch-masked), "
        "LayerNorm and RMSNorm; batches drawn at random (words padded to the batch's longest) or length-sorted "
        "(words of similar length together, the batches in random order). At each step after the first ",
        burn_in(s),
        ", the input of the first norm layer (block 0's ln_1): the padding's share of its positions; how far the "
        "statistics over every position sit from those over the real tokens (mean over channels of |mean "
        "difference| / real std); for the BatchNorms, Shen et al.'s measure, how far the batch statistics the "
        "layer normalizes with sit from its running ones (mean over channels of |batch mean - running mean| / "
        "running std, and of |batch var / running var - 1|). LayerNorm and RMSNorm have no batch or running "
        "statistics (n/a): each token is normalized over its own channels. After training: the validation loss in "
        "eval mode, and in training mode the largest change of a real token's logit when the same 32 validation "
        "words are padded to the block size instead of their longest. At most 3 seeds.",
        s.quick ? " --quick: a few steps and one seed, which only proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat("(a) exact: padding the same batch further moves a real token's logit by more than ", sci(kVisible),
               " with BatchNorm over every position, and by less than ", sci(kRounding),
               " with batch-masked, LayerNorm and RMSNorm, in every run; (b) with random batches, BatchNorm over "
               "every position ends with a higher validation loss than BatchNorm over the real tokens (seed by "
               "seed, mean above 0); (c) with random batches, its batch means sit farther from its running means "
               "than batch-masked's (seed by seed, mean above 0). Held: all three; held partly: some; did not hold: "
               "none.",
               margin_rule(cat(kLossFloor, " nats of loss and ", kDeviationFloor, " running std of deviation")),
               " Part (a) compares without a margin: rounding and a visible effect are orders of magnitude apart.");
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return first_seeds(s, 3); }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    const double cost = charlm_job(c, small_training(c.settings)).cost;
    for (NormKind norm : norms())
      for (const std::string& order : orders())
        append(jobs, seed_jobs(seeds_used(c.settings), cost, [&c, norm, order](uint64_t seed) {
                 return measure_padding_stats(c, norm, order, seed);
               }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    bool exact = !records.empty();
    for (const Record& r : records) {
      const double moved = r.num("padding_sensitivity");
      exact = exact && (r.text("norm") == "batch" ? moved > kVisible : moved < kRounding);
    }
    const auto batch = runs_of(records, NormKind::Batch, "random"),
               masked = runs_of(records, NormKind::BatchMasked, "random");
    const Comparison loss =
        compare_to_threshold(paired_differences(batch, masked, "val_loss", kUniformLoss), 0.0, kLossFloor);
    const Comparison dev =
        compare_to_threshold(paired_differences(batch, masked, "running_mean_dev", 0.0), 0.0, kDeviationFloor);
    const Truth worse = above(loss), farther = above(dev);
    return {
        verdict_of({truth_of(exact), worse, farther}),
        cat("(a) padding moves real tokens' logits: batch ", fixed(sensitivity(records, NormKind::Batch).max, 4),
            " at least ", fixed(sensitivity(records, NormKind::Batch).min, 4), "; batch-masked, layer, rms at most ",
            sci(std::max({sensitivity(records, NormKind::BatchMasked).max, sensitivity(records, NormKind::Layer).max,
                          sensitivity(records, NormKind::RMS).max})),
            " (", exact ? "as claimed" : "not as claimed",
            "); (b) random batches, batch's validation loss minus batch-masked's: ", comparison_text(loss, 4),
            " nats (", truth_text(worse, "worse", "not worse"),
            "); (c) batch's batch-to-running mean deviation minus batch-masked's: ", comparison_text(dev),
            " running std (", truth_text(farther, "farther", "not farther"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    for (NormKind norm : norms())
      for (const std::string& order : orders()) {
        const auto runs = runs_of(records, norm, order);
        const bool bn = has_batch_statistics(norm);
        rows.push_back({charlm::short_name(norm), order, mean_range(spread(runs, "pad_share")),
                        mean_range(spread(runs, "padding_dev")),
                        bn ? mean_range(spread(runs, "running_mean_dev")) : "n/a",
                        bn ? mean_range(spread(runs, "running_var_dev")) : "n/a",
                        mean_range(spread_counting_failures(runs, "val_loss", kUniformLoss)),
                        sci(spread(runs, "padding_sensitivity").max)});
      }
    const std::string table =
        "Per-step figures of the first norm layer's input (means over the steps), mean [min, max] over seeds; the "
        "last column is the largest over seeds:\n\n" +
        markdown_table(
            {"norm", "batches", "padding share", "all vs real tokens, mean (std)", "batch vs running mean (std)",
             "batch vs running var", "validation loss (eval)", "padding moves a logit by"},
            rows);
    const std::string second_look =
        "\n**Second look**: (a) and (c) measure what the sentence says, and hold: padding moves real tokens' "
        "outputs only where BatchNorm pools over every position. (b) adds a cost the sentence implies without "
        "saying it, and the sentence is imprecise there: with random batches the padding's share of the positions "
        "hardly changes from batch to batch (the padding share column's range), so the padding shifts the batch "
        "statistics by a steady amount that the running statistics and the layer's affine parameters take in, and "
        "the model is not worse for it. What costs validation loss is statistics that change with the batch's "
        "make-up: the length-sorted rows, where the padding is nearly gone and both BatchNorms end far behind "
        "LayerNorm and RMSNorm. \"BatchNorm on micro-batches in charlm\" (micro_batch) measures both BatchNorms "
        "against LayerNorm at batch 4.\n";
    return {table + second_look, {draw(s.out_dir, "padding_stats.png", picture(records))}};
  }

 private:
  /// How far padding moved a real token's logit, over the norm's runs.
  static lesson::Spread sensitivity(const std::vector<Record>& records, NormKind norm) {
    return spread(of_norm(records, norm), "padding_sensitivity");
  }
  /// Left: the BatchNorms' batch-to-running deviation against the padding share (sorted and
  /// random batches). Right: the validation loss per norm and batch order.
  static std::string picture(const std::vector<Record>& records) {
    std::string script =
        two_panels("padding_stats.png", "Padding and batch statistics in charlm (mean and range over seeds)");
    const char* const colours[] = {"#1b9e77", "#e7298a", "#d95f02", "#7570b3"};
    std::string plots;
    for (size_t n = 0; n < 2; ++n) {
      std::vector<std::vector<double>> rows;
      for (const std::string& order : orders()) {
        const auto runs = runs_of(records, norms()[n], order);
        const lesson::Spread dev = spread(runs, "running_mean_dev");
        rows.push_back({spread(runs, "pad_share").mean, dev.mean, dev.min, dev.max});
      }
      script += datablock(cat("dev", n), rows);
      plots += cat(n ? ", " : "plot ", "$dev", n, " using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '", colours[n],
                   "' title '", charlm::short_name(norms()[n]), "'");
    }
    script +=
        "set title 'batch mean vs running mean, first norm layer'\nset xlabel 'padding share of the batch'\n"
        "set ylabel 'mean |difference| / running std'\nset key top left\nset xrange [0:*]\nset yrange [0:*]\n" +
        plots + "\n";
    std::vector<std::vector<double>> bars;
    std::vector<std::string> labels;
    for (NormKind norm : norms())
      for (const std::string& order : orders()) {
        const lesson::Spread loss = spread_counting_failures(runs_of(records, norm, order), "val_loss", kUniformLoss);
        bars.push_back({double(bars.size()), loss.mean, loss.min, loss.max});
        labels.push_back(charlm::short_name(norm) + ", " + order);
      }
    return script + datablock("loss", bars) +
           cat("set title 'validation loss, eval mode'\nset xlabel ''\nset ylabel 'nats'\nset autoscale\n"
               "set xrange [-0.6:",
               double(bars.size()) - 0.4, "]\nset xtics (", xtics(labels),
               ") rotate by -30\nunset key\nplot $loss using 1:2:3:4 with yerrorbars lw 2 pt 7 lc rgb '#4477aa'\n"
               "unset multiplot\n");
  }
};

}  // namespace

std::shared_ptr<const Experiment> padding_stats_experiment() { return std::make_shared<PaddingStats>(); }

}  // namespace minidl::lab
