// 11. Careful initialization instead of normalization: does the right starting scale alone
// let the lesson's deep tanh network without a norm layer learn?
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::InitScheme;
using lesson::NormKind;

constexpr double kLearnedAccuracy = 0.8;  // learned well

std::vector<int64_t> depths(const Settings& s) {
  return s.quick ? std::vector<int64_t>{8} : std::vector<int64_t>{8, 16};
}

/// The standard deviation of every Tanh's output, in layer order, of the freshly built
/// model on the whole training split: the diagnostic of whether the signal survives depth.
std::vector<double> tanh_output_stds(const Context& c, const lesson::TrainOptions& o) {
  Generator gen(o.seed);
  auto model = lesson::build_model(o.norm, o.net, o.model, gen);
  model->eval();
  NoGradGuard no_grad;
  std::vector<double> stds;
  Tensor x = c.data.X_train;
  for (size_t i = 0; i < model->size(); ++i) {
    x = (*model)[i]->forward(x);
    if ((*model)[i]->type_name() != "Tanh") continue;
    const float* v = x.data();  // (N, width)
    double sum = 0.0, sum_sq = 0.0;
    const int64_t n = x.numel();
    for (int64_t k = 0; k < n; ++k) {
      sum += v[k];
      sum_sq += double(v[k]) * v[k];
    }
    const double mean = sum / double(n);
    stds.push_back(std::sqrt(std::max(0.0, sum_sq / double(n) - mean * mean)));
  }
  return stds;
}

class CarefulInit : public Experiment {
 public:
  CarefulInit()
      : Experiment({"careful_init", "Careful initialization instead of normalization",
                    "the deep tanh network without a norm layer is stuck because of its starting scale: Xavier or "
                    "Kaiming initialization with tanh's gain (5/3) lets it learn without normalization",
                    "lesson, \"A network that only trains with it\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's tanh network without a norm at depth ", joined(depths(s)),
               ", its Linear layers initialized as PyTorch does (the default), by xavier_uniform_ (gain 5/3 before "
               "a Tanh, 1 for the logits) or kaiming_normal_ (fan_in, tanh's gain), biases zeroed; LayerNorm with "
               "the default init beside them for reference. The lesson's training (SGD lr 0.05, batch 64, ",
               lesson_training(s).epochs,
               " epoch(s)). The picture: the standard deviation of each Tanh's output at initialization.");
  }
  std::string rule() const override {
    return cat(
        "at depth 8, an init \"learns\" when the no-norm network's mean validation accuracy over seeds is "
        "above ",
        kLearnedAccuracy,
        " (a diverged run counting as 0.1). Held: Xavier and Kaiming both learn; held partly: one of them "
        "does; did not hold: neither. (Whether the default init is stuck, and LayerNorm's figures, are "
        "context, not part of the rule.)",
        margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (int64_t depth : depths(c.settings))
      for (const auto& [norm, init] : cases())
        for (uint64_t seed : c.settings.seeds) jobs.push_back(job(c, norm, init, depth, seed));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto depth8 = where_num(records, "depth", 8.0);
    auto accuracy = [&](NormKind norm, InitScheme init) {
      return accuracy_against(where(of_norm(depth8, norm), {{"init", lesson::init_name(init)}}), kLearnedAccuracy, 0.1);
    };
    const Comparison xavier = accuracy(NormKind::None, InitScheme::Xavier),
                     kaiming = accuracy(NormKind::None, InitScheme::Kaiming);
    return {verdict_of({above(xavier), above(kaiming)}),
            cat("At depth 8 without a norm, mean validation accuracy: default ",
                comparison_text(accuracy(NormKind::None, InitScheme::PyTorch)), ", xavier ", comparison_text(xavier),
                " (", truth_text(above(xavier), "learns", "does not learn"), "), kaiming ", comparison_text(kaiming),
                " (", truth_text(above(kaiming), "learns", "does not learn"), "); LayerNorm with the default init ",
                comparison_text(accuracy(NormKind::Layer, InitScheme::PyTorch)), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    for (int64_t depth : depths(s)) {
      const auto at_depth = where_num(records, "depth", double(depth));
      for (const auto& [norm, init] : cases()) {
        const auto runs = where(of_norm(at_depth, norm), {{"init", lesson::init_name(init)}});
        rows.push_back({std::to_string(depth), lesson::display_name(norm), lesson::init_name(init),
                        mean_range(spread(runs, "train_loss")), mean_range(spread(runs, "val_accuracy")),
                        mean_range(spread(runs, "first_tanh_std")), mean_range(spread(runs, "last_tanh_std"))});
      }
    }
    std::string table =
        "Mean [min, max] over seeds; the Tanh output standard deviations are at initialization:\n\n" +
        markdown_table(
            {"depth", "norm", "init", "training loss", "val accuracy", "first Tanh's std", "last Tanh's std"}, rows);
    return {table, {draw_plot(s.out_dir, "careful_init.png", picture(records, s), 900, 520)}};
  }

 private:
  static std::vector<std::pair<NormKind, InitScheme>> cases() {
    return {{NormKind::None, InitScheme::PyTorch},
            {NormKind::None, InitScheme::Xavier},
            {NormKind::None, InitScheme::Kaiming},
            {NormKind::Layer, InitScheme::PyTorch}};
  }
  static Job job(const Context& c, NormKind norm, InitScheme init, int64_t depth, uint64_t seed) {
    lesson::TrainOptions o = lesson_run(c.settings, norm, seed);
    o.net.depth = depth;
    o.model.init = init;
    Job j = train_job(c, o);
    j.run = [&c, o, init, depth]() {
      Record keys;
      keys.set("depth", double(depth)).set("init", lesson::init_name(init));
      const std::vector<double> stds = tanh_output_stds(c, o);
      for (size_t i = 0; i < stds.size(); ++i) keys.set(cat("tanh_std_", i + 1), stds[i]);
      keys.set("first_tanh_std", stds.front()).set("last_tanh_std", stds.back());
      return std::vector<Record>{train_record(c, o, keys)};
    };
    return j;
  }
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    const int64_t depth = depths(s).back();
    std::string script =
        cat("set title 'Depth ", depth,
            ": standard deviation of each Tanh output at initialization (mean over seeds)'\n"
            "set xlabel 'layer'\nset ylabel 'std of tanh output'\nset key top right\nset yrange [0:1]\n");
    std::string plots;
    size_t i = 0;
    for (const auto& [norm, init] : cases()) {
      const auto runs =
          where(of_norm(where_num(records, "depth", double(depth)), norm), {{"init", lesson::init_name(init)}});
      std::vector<std::vector<double>> rows;
      for (int64_t layer = 1; layer <= depth; ++layer) {
        const lesson::Spread sd = spread(runs, cat("tanh_std_", layer));
        rows.push_back({double(layer), sd.count ? sd.mean : std::numeric_limits<double>::quiet_NaN()});
      }
      script += datablock(cat("s", i), rows);
      plots += cat(i ? ", " : "plot ", "$s", i, " using 1:2 with linespoints lw 2 title '", lesson::display_name(norm),
                   ", ", lesson::init_name(init), "'");
      ++i;
    }
    return script + plots + "\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> careful_init_experiment() { return std::make_shared<CarefulInit>(); }

}  // namespace minidl::lab
