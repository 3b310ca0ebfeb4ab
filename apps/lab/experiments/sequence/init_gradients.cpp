// Sequence 2. At initialization post-LN's gradients grow toward the output, pre-LN's stay flat
// (Xiong et al. 2020, Fig. 3 and Theorem 1): charlm's model, no training, one batch's gradient
// of each block's second feed-forward weight.
#include <cmath>

#include "checks.hpp"
#include "experiments/experiments.hpp"
#include "minidl/tensor/error.hpp"
#include "probes.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using charlm::Position;

constexpr double kGrowth = 2.0;       // post-LN: last block's gradient over the first's above this
constexpr double kFlat = 2.0;         // pre-LN: that ratio within [1 / kFlat, kFlat]
constexpr double kRatioFloor = 0.1;   // the ratios' margin floor
constexpr double kSlopeLine = -0.25;  // halfway between Theorem 1's slopes: pre-LN -1/2, post-LN 0
constexpr double kSlopeFloor = 0.05;  // the slopes' margin floor
constexpr int64_t kBatch = 32;        // words in the batch
constexpr int64_t kSeedsPerSeed = 4;  // each --seeds seed s gives seeds 4s .. 4s+3

int64_t profile_depth(const Settings& s) { return s.quick ? 4 : 12; }
std::vector<int64_t> depths(const Settings& s) {
  return s.quick ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{2, 4, 8, 12, 16};
}
std::vector<uint64_t> seeds(const Settings& s) {
  std::vector<uint64_t> list;
  for (uint64_t seed : s.seeds)
    for (uint64_t k = 0; k < kSeedsPerSeed; ++k) list.push_back(kSeedsPerSeed * seed + k);
  return list;
}
std::vector<Position> positions() { return {Position::Pre, Position::Post}; }

std::string position_title(Position p) { return p == Position::Pre ? "pre-LN" : "post-LN"; }

/// One record per block: its c_proj gradient norm for one batch of words through a freshly
/// built LayerNorm model.
std::vector<Record> gradient_norms(const Context& c, Position position, int64_t depth, uint64_t seed) {
  charlm::ModelOptions options;
  options.layers = depth;
  options.position = position;
  auto model = fresh_model(options, seed);
  model->train();
  words_loss(*model, training_words(c.words, kBatch, seed)).backward();
  std::vector<Record> records;
  const std::vector<double> norms = c_proj_gradient_norms(*model);
  for (size_t i = 0; i < norms.size(); ++i)
    records.push_back(Record()
                          .set("position", charlm::short_name(position))
                          .set("depth", double(depth))
                          .set("seed", double(seed))
                          .set("layer", double(i))
                          .set("grad_norm", norms[i]));
  return records;
}

}  // namespace

std::vector<double> c_proj_gradient_norms(const charlm::CharTransformer& model) {
  std::vector<double> norms;
  const auto parameters = model.named_parameters();
  for (int64_t i = 0; i < model.options().layers; ++i) {
    const std::string name = cat("transformer.h.", i, ".mlp.c_proj.weight");
    for (const auto& [parameter_name, parameter] : parameters)
      if (parameter_name == name) {
        const Tensor grad = parameter.grad();
        if (!grad.defined()) throw Error(cat(name, " has no gradient: run backward first"));
        double squares = 0.0;
        for (float g : grad.to_vector()) squares += double(g) * double(g);
        norms.push_back(std::sqrt(squares));
      }
  }
  return norms;
}

namespace {

std::vector<Record> of(const std::vector<Record>& records, Position p, int64_t depth) {
  return where_num(where(records, {{"position", charlm::short_name(p)}}), "depth", double(depth));
}

/// Per seed, the last block's gradient norm over the first's at `depth`.
std::vector<double> last_over_first(const std::vector<Record>& records, Position p, int64_t depth) {
  std::vector<double> ratios;
  const auto mine = of(records, p, depth);
  for (const Record& first : where_num(mine, "layer", 0.0))
    for (const Record& last : where_num(mine, "layer", double(depth - 1)))
      if (last.num("seed") == first.num("seed")) ratios.push_back(last.num("grad_norm") / first.num("grad_norm"));
  return ratios;
}

/// Per seed, the least-squares slope of ln(last block's gradient norm) against ln(depth).
std::vector<double> depth_slopes(const std::vector<Record>& records, Position p, const Settings& s) {
  std::vector<double> slopes;
  for (uint64_t seed : seeds(s)) {
    std::vector<std::pair<double, double>> points;  // (ln depth, ln norm)
    for (int64_t d : depths(s))
      for (const Record& r : where_num(where_num(of(records, p, d), "seed", double(seed)), "layer", double(d - 1)))
        points.emplace_back(std::log(double(d)), std::log(r.num("grad_norm")));
    if (points.size() < 2) continue;
    double mx = 0.0, my = 0.0;
    for (const auto& [x, y] : points) mx += x / double(points.size()), my += y / double(points.size());
    double sxy = 0.0, sxx = 0.0;
    for (const auto& [x, y] : points) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx);
    slopes.push_back(sxy / sxx);
  }
  return slopes;
}

class InitGradients : public Experiment {
 public:
  InitGradients()
      : Experiment(
            {"init_gradients", "Gradients at initialization: post-LN grows toward the output",
             "at initialization post-LN's gradients grow toward the output layer while pre-LN's stay flat, and "
             "pre-LN's last layer gradient shrinks with depth as 1/sqrt(L) (why post-LN needs a warmup)",
             "Layer Normalization note, \"Where it goes in a block\"; Xiong et al. 2020, Fig. 3 and Theorem 1"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm's model (width 64, 4 heads, LayerNorm, makemore's init) freshly built, no training: one batch "
        "of ",
        kBatch,
        " training words, the mean cross-entropy backward, and the gradient's Frobenius norm of each block's "
        "second feed-forward weight (transformer.h.{i}.mlp.c_proj.weight), pre-LN and post-LN, at depths ",
        joined(depths(s)), " (the profile over layers at depth ", profile_depth(s), "). Seeds ", kSeedsPerSeed, "s to ",
        kSeedsPerSeed, "s+", kSeedsPerSeed - 1, " for each of --seeds' s (", seeds(s).size(),
        " seeds; each seeds the init and draws the batch)", quick_note(s, "depths 2 and 4 only"));
  }
  std::string rule() const override {
    return cat(
        "per seed at depth 12, the ratio r of the last block's gradient norm to the first block's, and over "
        "depths the slope b of ln(last block's gradient norm) against ln(depth). Four parts: post-LN's mean r "
        "above ",
        kGrowth, " (grows toward the output); pre-LN's mean r between 1/", kFlat, " and ", kFlat,
        " (flat); pre-LN's mean b below ", kSlopeLine, " and post-LN's above it (", kSlopeLine,
        " is halfway between Theorem 1's -1/2 for pre-LN and 0 for post-LN). Held: all four; held partly: some; "
        "did not hold: none.",
        margin_rule(cat(kRatioFloor, " of a ratio, ", kSlopeFloor, " of a slope")));
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return seeds(s); }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (Position p : positions())
      for (int64_t d : depths(c.settings))
        for (uint64_t seed : seeds(c.settings))
          jobs.push_back({30.0 * double(d), [&c, p, d, seed] { return gradient_norms(c, p, d, seed); }});
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const int64_t depth = profile_depth(s);
    const Comparison post_r =
        compare_to_threshold(last_over_first(records, Position::Post, depth), kGrowth, kRatioFloor);
    const std::vector<double> pre_ratios = last_over_first(records, Position::Pre, depth);
    const Comparison pre_high = compare_to_threshold(pre_ratios, kFlat, kRatioFloor);
    const Comparison pre_low = compare_to_threshold(pre_ratios, 1.0 / kFlat, kRatioFloor);
    const Comparison pre_b = compare_to_threshold(depth_slopes(records, Position::Pre, s), kSlopeLine, kSlopeFloor);
    const Comparison post_b = compare_to_threshold(depth_slopes(records, Position::Post, s), kSlopeLine, kSlopeFloor);
    const Truth grows = above(post_r), flat = all_of({below(pre_high), above(pre_low)});
    const Truth pre_shrinks = below(pre_b), post_steady = above(post_b);
    return {verdict_of({grows, flat, pre_shrinks, post_steady}),
            cat("At depth ", depth, ", last over first block: post-LN ", comparison_text(post_r, 2), " (",
                truth_text(grows, "grows", "does not grow"), "), pre-LN ", comparison_text(pre_high, 2), " (",
                truth_text(flat, "flat", "not flat"), "). Slope against depth: pre-LN ", comparison_text(pre_b, 2),
                " (", truth_text(pre_shrinks, "shrinks", "does not shrink"), "), post-LN ", comparison_text(post_b, 2),
                " (", truth_text(post_steady, "steady", "shrinks"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const int64_t depth = profile_depth(s);
    std::vector<std::vector<std::string>> rows;
    for (Position p : positions()) {
      std::vector<std::string> row{position_title(p)};
      for (int64_t i = 0; i < depth; ++i)
        row.push_back(fixed(spread(where_num(of(records, p, depth), "layer", double(i)), "grad_norm").mean, 3));
      row.push_back(mean_range(lesson::spread_of(last_over_first(records, p, depth)), 2));
      row.push_back(mean_range(lesson::spread_of(depth_slopes(records, p, s)), 2));
      rows.push_back(row);
    }
    std::vector<std::string> header{"position"};
    for (int64_t i = 0; i < depth; ++i) header.push_back(cat("block ", i));
    header.push_back("last / first");
    header.push_back("slope against depth");
    const std::string table =
        cat("Gradient norm of each block's mlp.c_proj.weight at depth ", depth,
            " (mean over seeds), the ratio last / first and the slope of ln(last block's norm) against ln(depth) "
            "(mean [min, max] over seeds):\n\n",
            markdown_table(header, rows));
    return {table, {draw(s.out_dir, "init_gradients.png", picture(records, s))}};
  }

 private:
  /// Left: gradient norm against block index at the profile depth; right: the last block's
  /// against depth, log-log, with Theorem 1's 1/sqrt(L) for reference.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    const int64_t depth = profile_depth(s);
    std::string script = two_panels(
        "init_gradients.png",
        "Gradient norm of each block's second feed-forward weight at initialization, LayerNorm (mean and range "
        "over seeds)");
    std::string left, right;
    for (Position p : positions()) {
      const std::string name = charlm::short_name(p);
      std::vector<std::vector<double>> by_layer, by_depth;
      for (int64_t i = 0; i < depth; ++i) {
        const lesson::Spread g = spread(where_num(of(records, p, depth), "layer", double(i)), "grad_norm");
        by_layer.push_back({double(i), g.mean, g.min, g.max});
      }
      for (int64_t d : depths(s)) {
        const lesson::Spread g = spread(where_num(of(records, p, d), "layer", double(d - 1)), "grad_norm");
        by_depth.push_back({double(d), g.mean, g.min, g.max});
      }
      script += datablock("layer_" + name, by_layer) + datablock("depth_" + name, by_depth);
      const std::string style = cat(" using 1:2:3:4 with yerrorlines lw 2 lc rgb '",
                                    p == Position::Pre ? "#4477aa" : "#cc6677", "' title '", position_title(p), "'");
      left += cat(left.empty() ? "plot " : ", ", "$layer_", name, style);
      right += cat(right.empty() ? "plot " : ", ", "$depth_", name, style);
    }
    const double first_pre =
        spread(where_num(of(records, Position::Pre, depths(s).front()), "layer", double(depths(s).front() - 1)),
               "grad_norm")
            .mean;
    script += cat(
        "set title 'each block at depth ", depth,
        "'\nset xtics 1\nset xlabel 'block (0: next to the input)'\nset ylabel 'gradient norm'\nset logscale y\n"
        "set key top left\n",
        left, "\nset title 'the last block against depth'\nset xtics auto\nset xlabel 'blocks'\nset logscale x 2\n",
        right, cat(", ", first_pre, " * sqrt(", depths(s).front(), " / x) with lines dt 2 lc 'gray' title '1/sqrt(L)'"),
        "\nunset multiplot\n");
    return script;
  }
};

}  // namespace

std::shared_ptr<const Experiment> init_gradients_experiment() { return std::make_shared<InitGradients>(); }

}  // namespace minidl::lab
