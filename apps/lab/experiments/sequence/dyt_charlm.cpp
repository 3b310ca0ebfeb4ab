// Papers chapter: DyT against LayerNorm in charlm (Zhu et al. 2025): the validation loss
// over seeds with DyT in every norm's place, and the paper's Fig. 2 on a trained charlm: its
// LayerNorm's output against its input, in the first and the last block.
#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using charlm::NormKind;

constexpr double kLossTolerance = 0.05;  // nats: "as well" means at most this much worse
constexpr double kLossFloor = 0.01;      // nats: the margin's floor
constexpr int64_t kFigureWords = 32;     // validation words the Fig. 2 points come from
constexpr int64_t kFigureChannels = 4;   // channels 0..3 of each LayerNorm, as the paper plots a few

int64_t steps(const Settings& s) { return s.quick ? 12 : 600; }

/// The points of Fig. 2: (block, channel, x, y) of the first and last block's ln_1 over the
/// first validation words' real positions, one word a batch (no padding).
std::vector<Record> layer_norm_points(const Context& c, charlm::CharTransformer& model) {
  const int64_t last = model.options().layers - 1;
  std::vector<Record> points;
  for (int64_t block : {int64_t(0), last}) {
    nn::Module& ln = submodule(model, cat("transformer.h.", block, ".ln_1"));
    std::vector<float> input, output;  // (T, C) of the word's positions, row-major
    int64_t width = 0;
    RemovableHandle hook = ln.register_forward_hook([&](nn::Module&, const Tensor& x, const Tensor& y) {
      input = x.to_vector();
      output = y.to_vector();
      width = x.size(-1);
      return Tensor();
    });
    NoGradGuard no_grad;
    model.eval();
    for (int64_t w = 0; w < std::min<int64_t>(kFigureWords, int64_t(c.words.val.size())); ++w) {
      model.forward(charlm::make_batch(c.words.words, {c.words.val[size_t(w)]}).x);
      if (width == 0) throw Error("dyt_charlm: the forward hook on ln_1 did not fire");
      const int64_t positions = int64_t(input.size()) / width;
      for (int64_t t = 0; t < positions; ++t)
        for (int64_t ch = 0; ch < kFigureChannels; ++ch)
          points.push_back({{"kind", "point"},
                            {"block", double(block)},
                            {"channel", double(ch)},
                            {"x", double(input[size_t(t * width + ch)])},
                            {"y", double(output[size_t(t * width + ch)])}});
    }
    hook.remove();
  }
  return points;
}

/// R^2 of the best y = a f(x) + b over the points: how much of y's spread f explains.
double r_squared(const std::vector<Record>& points, const std::function<double(double)>& f) {
  double n = 0, sf = 0, sy = 0, sff = 0, sfy = 0, syy = 0;
  for (const Record& p : points) {
    const double u = f(p.num("x")), y = p.num("y");
    n += 1, sf += u, sy += y, sff += u * u, sfy += u * y, syy += y * y;
  }
  const double cov = sfy - sf * sy / n, var_f = sff - sf * sf / n, var_y = syy - sy * sy / n;
  return var_f > 0 && var_y > 0 ? cov * cov / (var_f * var_y) : 0.0;
}

/// The best tanh's R^2 over its steepness k, y = a tanh(k x) + b, k on a log grid.
double tanh_r_squared(const std::vector<Record>& points) {
  double best = 0.0;
  for (double k = 0.01; k <= 10.0; k *= 1.25)
    best = std::max(best, r_squared(points, [k](double x) { return std::tanh(k * x); }));
  return best;
}

class DytCharlm : public Experiment {
 public:
  DytCharlm()
      : Experiment({"dyt_charlm", "DyT against LayerNorm in charlm",
                    "a transformer trains as well with DyT, an elementwise y = weight * tanh(alpha x) + bias, in "
                    "place of every LayerNorm; a trained LayerNorm's output against its input traces a tanh-like S "
                    "in deeper blocks",
                    "Zhu, Chen, He, LeCun and Liu 2025, \"Transformers without Normalization\", Sec. 2 (Fig. 2) and "
                    "Sec. 5"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm at makemore's defaults (4 layers, 4 heads, width 64, pre-norm, AdamW lr 5e-4, batch 32) with "
        "LayerNorm or DyT (alpha 0.5 at init, the paper's default; the final norm too), ",
        steps(s),
        " steps, the validation loss in eval mode at the end, seeds paired. Fig. 2: the LayerNorm run of the "
        "first seed, after training, on its first ",
        kFigureWords,
        " validation words one at a time: the first and the last block's ln_1, input against "
        "output, channels 0-",
        kFigureChannels - 1, ".",
        s.quick ? " --quick: a few steps and one seed, which only proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat(
        "trains as well: DyT's validation loss minus LayerNorm's, seed by seed (a diverged run counting ln 27), "
        "is on average below ",
        kLossTolerance,
        " nats: held when it is, did not hold when it is not. The S of Fig. 2 is shown with its figures "
        "(how much of the output a line and the best tanh explain, R^2), not judged.",
        margin_rule(cat(kLossFloor, " nats")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return charlm_jobs(c, charlm_training(c.settings, steps(c.settings), steps(c.settings)),
                       {NormKind::Layer, NormKind::DyT}, [&c](const charlm::RunOptions& o) {
                         if (o.model.norm == NormKind::Layer && o.seed == c.settings.seeds.front())
                           return run_with_points(c, o);
                         return std::vector<Record>{charlm_record(c, o, Record().set("kind", "run"))};
                       });
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto runs = where(records, {{"kind", "run"}});
    const Comparison loss = compare_to_threshold(
        paired_differences(where(runs, {{"norm", "dyt"}}), where(runs, {{"norm", "layer"}}), "val_loss", kUniformLoss),
        kLossTolerance, kLossFloor);
    const Truth as_well = below(loss);
    return {verdict_of({as_well}), cat("DyT's validation loss minus LayerNorm's: ", comparison_text(loss, 4), " nats (",
                                       truth_text(as_well, "as well", "worse"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    for (NormKind norm : {NormKind::Layer, NormKind::DyT}) {
      const auto runs = where(records, {{"kind", "run"}, {"norm", charlm::short_name(norm)}});
      rows.push_back({charlm::short_name(norm), mean_range(spread_counting_failures(runs, "val_loss", kUniformLoss)),
                      mean_range(spread(runs, "train_loss"))});
    }
    std::vector<std::vector<std::string>> fits;
    for (double block : blocks(records)) {
      const auto points = where_num(where(records, {{"kind", "point"}}), "block", block);
      fits.push_back({cat(block), cat(points.size()), fixed(r_squared(points, [](double x) { return x; })),
                      fixed(tanh_r_squared(points))});
    }
    const std::string table =
        "Mean [min, max] over seeds:\n\n" + markdown_table({"norm", "validation loss", "training loss"}, rows) +
        "\nFig. 2, the trained LayerNorm's output against its input (R^2 of the best line a x + b and of the best "
        "a tanh(k x) + b):\n\n" +
        markdown_table({"block", "points", "line R^2", "tanh R^2"}, fits);
    return {table, {draw(s.out_dir, "dyt_charlm.png", picture(records))}};
  }

 private:
  static std::vector<Record> run_with_points(const Context& c, const charlm::RunOptions& o) {
    std::vector<Record> points;
    std::vector<Record> out{charlm_record(c, o, Record().set("kind", "run"), [&](charlm::RunResult& trained) {
      if (trained.model) points = layer_norm_points(c, *trained.model);
    })};
    out.insert(out.end(), points.begin(), points.end());
    return out;
  }
  static std::vector<double> blocks(const std::vector<Record>& records) {
    std::vector<double> list;
    for (const Record& r : where(records, {{"kind", "point"}}))
      if (std::find(list.begin(), list.end(), r.num("block")) == list.end()) list.push_back(r.num("block"));
    return list;
  }
  /// A panel per block: each channel's points, output against input.
  static std::string picture(const std::vector<Record>& records) {
    std::string script = two_panels("dyt_charlm.png", "A trained LayerNorm in charlm: output against input (Fig. 2)");
    const char* const colours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a"};
    for (double block : blocks(records)) {
      std::string plots;
      for (int64_t ch = 0; ch < kFigureChannels; ++ch) {
        std::vector<std::vector<double>> rows;
        for (const Record& p :
             where_num(where_num(where(records, {{"kind", "point"}}), "block", block), "channel", double(ch)))
          rows.push_back({p.num("x"), p.num("y")});
        const std::string name = cat("b", int64_t(block), "c", ch);
        script += datablock(name, rows);
        plots += cat(ch ? ", " : "plot ", "$", name, " using 1:2 with points pt 7 ps 0.5 lc rgb '", colours[ch],
                     "' title 'channel ", ch, "'");
      }
      script += cat("set title 'block ", int64_t(block),
                    ", ln_1'\nset xlabel 'input'\nset ylabel 'output'\n"
                    "set key top left\n",
                    plots, "\n");
    }
    return script + "unset multiplot\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> dyt_charlm_experiment() { return std::make_shared<DytCharlm>(); }

}  // namespace minidl::lab
