// 10. GroupNorm's two ends: G = 1 is LayerNorm over (C, ...), G = C is per-channel
// (instance) normalization; and the lesson's network trained with several G.
#include "minidl/nn/norm/group_norm.hpp"

#include "experiments/experiments.hpp"
#include "minidl/nn/norm/layer_norm.hpp"

namespace minidl::lab {

namespace {

constexpr double kRounding = 1e-5;  // outputs of size about 1 in float32

std::vector<int64_t> groups(const Settings& s) {
  return s.quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 2, 8, 32, 64};
}

double max_difference(const Tensor& a, const std::vector<double>& b) {
  double d = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, std::fabs(double(a.data()[i]) - b[size_t(i)]));
  return d;
}

class GroupNormExperiment : public Experiment {
 public:
  GroupNormExperiment()
      : Experiment({"group_norm", "GroupNorm's two ends",
                    "GroupNorm sits between the others: G = 1 normalizes all channels and positions of an example "
                    "together (LayerNorm over (C, ...)), G = C each channel on its own (instance normalization)",
                    "study guide, \"Focus on\" and the self-test"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "Exact part: a random (4, 8, 5) input per seed through GroupNorm(1, 8) and LayerNorm((8, 5)), and "
        "through GroupNorm(8, 8) and per-channel normalization computed in double. Training part: the "
        "lesson's network with GroupNorm(G, 64), G = 1, 2, 8, 32, 64 (",
        lesson_training(s).epochs,
        " epoch(s)). Its features have no positions, so G = 64 puts one value in each group.");
  }
  std::string rule() const override {
    return cat("held when on every seed both ends match within ", kRounding,
               "; held partly when one end does; else did not hold. The training table is shown, not judged.",
               exact_rule());
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs = seed_jobs(c.settings.seeds, 10.0, [](uint64_t seed) {
      const GroupNormEnds m = measure_group_norm_ends(seed);
      return Record{{"part", "exact"},
                    {"seed", double(seed)},
                    {"groups", 0.0},
                    {"one_group_vs_layer_norm", m.one_group_vs_layer_norm},
                    {"c_groups_vs_instance_norm", m.c_groups_vs_instance_norm}};
    });
    const std::vector<int64_t> gs = groups(c.settings);
    append(jobs,
           grid_jobs(c, Record().set("part", "training"), "groups", {gs.begin(), gs.end()}, {lesson::NormKind::Group},
                     c.settings.seeds, [](lesson::TrainOptions& o, double g) { o.net.groups = int64_t(g); }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto exact = where(records, {{"part", "exact"}});
    const lesson::Spread one = spread(exact, "one_group_vs_layer_norm"),
                         all = spread(exact, "c_groups_vs_instance_norm");
    return {verdict_of({truth_of(one.max <= kRounding), truth_of(all.max <= kRounding)}),
            cat("G = 1 against LayerNorm: ", sci(one.max), "; G = C against per-channel normalization: ", sci(all.max),
                ". In the network, G = 64 leaves one value per group, so every GroupNorm outputs its "
                "bias whatever the input (as BatchNorm would at a batch of one).")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const auto exact = where(records, {{"part", "exact"}});
    const lesson::Spread one = spread(exact, "one_group_vs_layer_norm"),
                         all = spread(exact, "c_groups_vs_instance_norm");
    std::string table = "Exact part, largest difference over seeds:\n\n" +
                        markdown_table({"comparison", "largest difference"},
                                       {{"GroupNorm(1, 8) vs LayerNorm((8, 5))", sci(one.max)},
                                        {"GroupNorm(8, 8) vs per-channel normalization", sci(all.max)}});
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> points;
    const auto training = where(records, {{"part", "training"}});
    for (int64_t g : groups(s)) {
      const auto mine = where_num(training, "groups", double(g));
      const lesson::Spread loss = spread(mine, "train_loss"), acc = spread(mine, "val_accuracy");
      rows.push_back({std::to_string(g), std::to_string(64 / g), mean_range(loss), mean_range(acc)});
      points.push_back({double(g), acc.mean, acc.min, acc.max});
    }
    table += "\nTraining part, mean [min, max] over seeds:\n\n" +
             markdown_table({"G", "channels per group", "training loss", "val accuracy"}, rows);
    const std::string script =
        datablock("g", points) +
        "set title 'GroupNorm(G, 64) in the lesson network: validation accuracy (mean and range over seeds)'\n"
        "set logscale x 2\nset xrange [0.7:90]\nset yrange [0:1]\nset xlabel 'groups G'\n"
        "set ylabel 'validation accuracy'\nunset key\nplot $g using 1:2:3:4 with yerrorlines lw 2\n";
    return {table, {draw_plot(s.out_dir, "group_norm.png", script, 800, 460)}};
  }
};

}  // namespace

GroupNormEnds measure_group_norm_ends(uint64_t seed, int64_t n, int64_t c, int64_t l) {
  Generator gen(seed);
  const Tensor x = Tensor::randn({n, c, l}, gen, 1.0f, 2.0f);  // (N, C, L), off-center on purpose
  NoGradGuard no_grad;
  nn::GroupNorm one_group(nn::GroupNormOptions{.num_groups = 1, .num_channels = c});
  nn::LayerNorm over_c_l(nn::LayerNormOptions{.normalized_shape = {c, l}});
  nn::GroupNorm c_groups(nn::GroupNormOptions{.num_groups = c, .num_channels = c});
  const Tensor a = one_group(x), b = over_c_l(x), d = c_groups(x);
  std::vector<double> layer(b.numel()), instance(size_t(x.numel()));
  for (int64_t i = 0; i < b.numel(); ++i) layer[size_t(i)] = b.data()[i];
  // Per (example, channel) over the L positions, in double: instance normalization.
  const float* v = x.data();
  for (int64_t row = 0; row < n * c; ++row) {
    double mean = 0.0, var = 0.0;
    for (int64_t p = 0; p < l; ++p) mean += v[row * l + p];
    mean /= double(l);
    for (int64_t p = 0; p < l; ++p) var += std::pow(v[row * l + p] - mean, 2);
    var /= double(l);
    for (int64_t p = 0; p < l; ++p) instance[size_t(row * l + p)] = (v[row * l + p] - mean) / std::sqrt(var + 1e-5);
  }
  return {max_difference(a, layer), max_difference(d, instance)};
}

std::shared_ptr<const Experiment> group_norm_experiment() { return std::make_shared<GroupNormExperiment>(); }

}  // namespace minidl::lab
