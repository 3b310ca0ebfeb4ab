// 5. Forgetting model.eval(): a trained BatchNorm model evaluated in training mode.
#include <functional>

#include "experiments/bn_tools.hpp"
#include "experiments/experiments.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/shape_ops.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

std::vector<int64_t> train_batches(const Settings& s) {
  return s.quick ? std::vector<int64_t>{64, 2} : std::vector<int64_t>{64, 8, 2};
}

// Largest |change| of any running_mean between the trained model and this one.
double running_mean_shift(const nn::Sequential& trained, const nn::Sequential& used) {
  const auto a = batch_norms(trained), b = batch_norms(used);
  double shift = 0.0;
  for (size_t k = 0; k < a.size(); ++k)
    for (int64_t c = 0; c < a[k]->running_mean.numel(); ++c)
      shift = std::max(shift, double(std::fabs(a[k]->running_mean.data()[c] - b[k]->running_mean.data()[c])));
  return shift;
}

// The validation split in training mode in batches of `batch` (the last one shorter).
Tensor logits_in_train_mode(nn::Sequential& model, const Tensor& X, int64_t batch) {
  NoGradGuard no_grad;
  model.train();
  const int64_t n = X.size(0);
  std::vector<float> out;
  for (int64_t start = 0; start < n; start += batch) {
    std::vector<int64_t> rows;
    for (int64_t i = start; i < std::min(n, start + batch); ++i) rows.push_back(i);
    const std::vector<float> part = model(select_rows(X, rows)).to_vector();
    out.insert(out.end(), part.begin(), part.end());
  }
  return Tensor::from_vector(out, {n, int64_t(out.size()) / n});
}

// What training mode computes for a batch of one, written out: each BatchNorm's batch mean is
// the example itself and its variance 0, so it outputs its bias (PyTorch refuses to run it).
Tensor logits_batch_of_one_formula(nn::Sequential& model, const Tensor& X) {
  NoGradGuard no_grad;
  Tensor h = X;
  for (size_t i = 0; i < model.size(); ++i) {
    if (auto* bn = dynamic_cast<nn::BatchNormBase*>(model[i].get())) {
      h = Tensor::zeros(h.shape()) + bn->bias;  // (N, C): every row the shift
    } else {
      h = (*model[i])(h);
    }
  }
  return h;
}

class EvalMode : public Experiment {
 public:
  EvalMode()
      : Experiment({"eval_mode", "Forgetting model.eval()",
                    "forgetting model.eval() at test time gives different, usually worse, predictions; with a batch of "
                    "one, training-mode BatchNorm maps every feature to its shift",
                    "lesson, \"Batch norm's two modes\"; study guide, \"Traps\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's BatchNorm network trained as the lesson does (", lesson_training(s).epochs,
               " epoch(s)), then its validation accuracy in eval mode, in training mode on the whole validation "
               "split (360) at once, in training mode in batches of 64, 8 and 2 (each on a fresh copy of the "
               "trained model), and for a batch of one the training-mode formula (PyTorch and minidl refuse to "
               "run it: \"Expected more than 1 value per channel when training\"). After each training-mode pass "
               "the table gives the largest change of any running_mean and the eval-mode accuracy of the changed "
               "model.");
  }
  std::string rule() const override {
    return cat(
        "(a) the eval-mode accuracy minus the training-mode accuracy in batches of 8, and in batches of 2, seed "
        "by seed, is on average above 0; (b) the batch-of-one formula predicts a single class for every example, "
        "on every seed (a count: no margin). Held: both; held partly: one; did not hold: neither.",
        margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return seed_jobs(c.settings.seeds, double(lesson_training(c.settings).epochs) * 1437.0 * 8.0 * 2,
                     [&c](uint64_t seed) { return measure(c, seed); });
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const auto eval = where(records, {{"evaluation", "eval mode"}});
    std::vector<Truth> worse;
    std::string figures;
    for (int64_t b : train_batches(s))
      if (b < 64) {
        const Comparison c =
            accuracy_gain(eval, where(records, {{"evaluation", cat("train mode, batches of ", b)}}), 0.0);
        worse.push_back(above(c));
        figures += cat(", batches of ", b, " ", comparison_text(c));
      }
    const lesson::Spread one = spread(where(records, {{"evaluation", "batch of one (formula)"}}), "classes");
    const bool single = one.count > 0 && one.max == 1.0;
    return {verdict_of({all_of(worse), truth_of(single)}),
            cat("Eval mode's accuracy ", fixed(spread(eval, "val_accuracy").mean),
                "; its lead over training mode, mean over seeds:", figures.substr(1), " (",
                truth_text(all_of(worse), "training mode is worse", "training mode is not worse"),
                "); the batch-of-one formula predicts ", fixed(one.max, 0),
                " class(es) at most. Training-mode passes also moved the running statistics "
                "(the \"largest running_mean change\" column), so forgetting eval() changes the model itself.")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> bars;
    std::vector<std::string> modes;
    for (const Record& r : records)
      if (r.num("seed") == double(s.seeds.front())) modes.push_back(r.text("evaluation"));
    for (size_t i = 0; i < modes.size(); ++i) {
      const auto mine = where(records, {{"evaluation", modes[i]}});
      const lesson::Spread acc = spread(mine, "val_accuracy"), classes = spread(mine, "classes"),
                           shift = spread(mine, "running_mean_shift"), after = spread(mine, "eval_accuracy_after");
      rows.push_back({modes[i], mean_range(acc), mean_range(classes, 1), mean_range(shift, 4), mean_range(after)});
      bars.push_back({double(i), acc.mean, acc.min, acc.max});
    }
    const std::string table = "Validation accuracy, mean [min, max] over seeds:\n\n" +
                              markdown_table({"evaluation", "accuracy", "classes predicted",
                                              "largest running_mean change", "eval accuracy afterwards"},
                                             rows);
    const std::string script =
        datablock("acc", bars) +
        cat("set title 'Forgetting model.eval(): validation accuracy of a trained BatchNorm network'\n"
            "set style fill solid 0.6\nset boxwidth 0.6\nset yrange [0:1]\nset ylabel 'validation accuracy'\n"
            "set xtics (",
            xtics(modes),
            ") rotate by -20\nunset key\nplot $acc using 1:2 with boxes lc rgb '#4477aa', "
            "$acc using 1:2:3:4 with yerrorbars lc 'black' pt 0\n");
    return {table, {draw_plot(s.out_dir, "eval_mode.png", script, 900, 480)}};
  }

 private:
  static std::vector<Record> measure(const Context& c, uint64_t seed) {
    const lesson::TrainOptions o = lesson_run(c.settings, NormKind::Batch, seed);
    const lesson::RunResult run = lesson::train_run(c.data, o);
    if (!run.ok()) throw Error(*run.failure);
    const nn::Sequential& trained = *run.model;
    const Tensor& X = c.data.X_val;
    const Tensor& y = c.data.y_val;
    std::vector<Record> out;
    // Each way of evaluating runs on a fresh copy of the trained model, since a training-mode
    // pass moves the running statistics; the copy's eval-mode accuracy afterwards shows the move.
    auto add = [&](const std::string& what, const std::function<Tensor(nn::Sequential&)>& logits) {
      auto used = copy_model(trained, NormKind::Batch, o.net);
      const Predictions p = predictions(logits(*used), y);
      auto after = copy_model(*used, NormKind::Batch, o.net);
      after->eval();
      NoGradGuard no_grad;
      const double eval_after = predictions((*after)(X), y).accuracy;
      out.push_back(Record()
                        .set("seed", double(seed))
                        .set("evaluation", what)
                        .set("val_accuracy", p.accuracy)
                        .set("classes", double(p.classes))
                        .set("running_mean_shift", running_mean_shift(trained, *used))
                        .set("eval_accuracy_after", eval_after));
    };
    add("eval mode", [&](nn::Sequential& m) {
      m.eval();
      NoGradGuard no_grad;
      return m(X);
    });
    add("train mode, all 360 at once", [&](nn::Sequential& m) { return logits_in_train_mode(m, X, X.size(0)); });
    for (int64_t b : train_batches(c.settings))
      add(cat("train mode, batches of ", b), [&](nn::Sequential& m) { return logits_in_train_mode(m, X, b); });
    add("batch of one (formula)", [&](nn::Sequential& m) { return logits_batch_of_one_formula(m, X); });
    return out;
  }
};

}  // namespace

std::shared_ptr<const Experiment> eval_mode_experiment() { return std::make_shared<EvalMode>(); }

}  // namespace minidl::lab
