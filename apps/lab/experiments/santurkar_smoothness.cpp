// Santurkar et al. 2018: does BatchNorm smooth the loss landscape along the training path, and
// does it still train when noise after it undoes any reduction of internal covariate shift?
#include "experiments/bn_tools.hpp"
#include "experiments/experiments.hpp"
#include "minidl/data/data_loader.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/cross_entropy.hpp"
#include "minidl/optim/sgd.hpp"
#include "models/arch.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr int64_t kEvery = 5;                     // optimizer steps between two probes of the landscape
constexpr double kBetaFloor = 0.2;                // of ln beta: a factor of 1.22
constexpr double kNoisyTolerance = 0.05;          // of accuracy: noisy BatchNorm "trains as" BatchNorm within it
constexpr uint64_t kNoiseSalt = 0x6e6f697379ull;  // the noise's stream, apart from the init's

// The step sizes of a probe: 1 to 8 times the lesson's lr 0.05.
std::vector<double> etas() { return {0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4}; }

struct Variant {
  std::string name, label, colour;
};
std::vector<Variant> variants() {
  return {{"none", "no norm (PyTorch init)", "#555555"},
          {"none_xavier", "no norm (Xavier, gain 5/3)", "#7570b3"},
          {"batch", "BatchNorm1d", "#1b9e77"},
          {"noisy_batch", "noisy BatchNorm", "#66a61e"},
          {"layer", "LayerNorm", "#d95f02"}};
}

std::string label_of(const std::string& name) {
  for (const Variant& v : variants())
    if (v.name == name) return v.label;
  throw Error(cat("santurkar_smoothness: no variant \"", name, "\""));
}

// Noisy BatchNorm's noise (Santurkar et al., Sec. 2.1): after each BatchNorm, each unit's output
// is scaled by a draw from U(0.5, 1.5) and shifted by one from U(-1, 1), drawn anew at every
// step, so the next layer's input distribution moves at every step however well BatchNorm
// steadied it. Eval mode passes the input through: the scale's mean is 1 and the shift's 0.
class StepNoise : public nn::Module {
 public:
  StepNoise(int64_t width, std::shared_ptr<Generator> gen) : width_(width), gen_(std::move(gen)) { redraw(); }
  void redraw() {
    scale_ = Tensor::rand({width_}, *gen_, 0.5f, 1.5f);   // (width)
    shift_ = Tensor::rand({width_}, *gen_, -1.0f, 1.0f);  // (width)
  }
  Tensor forward(const Tensor& input) override { return is_training() ? input * scale_ + shift_ : input; }
  std::string type_name() const override { return "StepNoise"; }

 private:
  int64_t width_;
  std::shared_ptr<Generator> gen_;
  Tensor scale_, shift_;
};

struct Model {
  std::shared_ptr<nn::Sequential> net;
  std::vector<std::shared_ptr<StepNoise>> noise;  // noisy_batch's, one after each BatchNorm
};

Model build(const std::string& variant, uint64_t seed) {
  Generator gen(seed);
  lesson::ModelOptions options;
  if (variant == "none_xavier") options.init = lesson::InitScheme::Xavier;
  const NormKind norm = variant == "batch" || variant == "noisy_batch" ? NormKind::Batch
                        : variant == "layer"                           ? NormKind::Layer
                                                                       : NormKind::None;
  Model m{lesson::build_model(norm, {}, options, gen), {}};
  if (variant != "noisy_batch") return m;
  auto noise_gen = std::make_shared<Generator>(seed ^ kNoiseSalt);
  auto noisy = std::make_shared<nn::Sequential>();
  for (size_t i = 0; i < m.net->size(); ++i) {
    noisy->push_back((*m.net)[i]);
    if (auto* bn = dynamic_cast<nn::BatchNormBase*>((*m.net)[i].get())) {
      m.noise.push_back(std::make_shared<StepNoise>(bn->options().num_features, noise_gen));
      noisy->push_back(m.noise.back());
    }
  }
  m.net = noisy;
  return m;
}

// The batch loss at the current weights and its gradient, one tensor per parameter.
std::pair<double, std::vector<Tensor>> gradient_at(nn::Sequential& net, const data::Batch& batch) {
  net.zero_grad();
  const Tensor loss = cross_entropy(net(batch.inputs), batch.targets);
  loss.backward();
  std::vector<Tensor> grads;
  for (const Tensor& p : net.parameters()) grads.push_back(p.grad().clone());
  return {loss.item(), grads};
}

// The Euclidean norm of a - b (b empty: of a), over every parameter.
double distance(const std::vector<Tensor>& a, const std::vector<Tensor>& b = {}) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].numel(); ++k) {
      const double d = double(a[i].data()[k]) - (b.empty() ? 0.0 : double(b[i].data()[k]));
      sum += d * d;
    }
  return std::sqrt(sum);
}

// Santurkar et al.'s Fig. 4 at one point of the training path, on that step's batch: the loss
// L(w - eta g) and the gradient's change |g(w) - g(w - eta g)| over the step sizes, and the
// effective beta, max over them of |g(w) - g(w - eta g)| / |eta g|. Leaves the weights, the
// running statistics and the noise as they were.
Record probe(nn::Sequential& net, const data::Batch& batch, Record r) {
  net.train();
  BufferGuard keep_running_stats(net);
  std::vector<Tensor> params = net.parameters(), start;
  for (const Tensor& p : params) start.push_back(p.clone());
  const auto [loss, g] = gradient_at(net, batch);
  const double g_norm = distance(g);
  double loss_min = INFINITY, loss_max = -INFINITY, change_min = INFINITY, change_max = 0.0, beta = 0.0;
  for (double eta : etas()) {
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(start[i] - float(eta) * g[i]);
    }
    const auto [moved_loss, moved_g] = gradient_at(net, batch);
    const double change = distance(g, moved_g);
    loss_min = std::min(loss_min, moved_loss), loss_max = std::max(loss_max, moved_loss);
    change_min = std::min(change_min, change), change_max = std::max(change_max, change);
    beta = std::max(beta, change / (eta * g_norm));
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(start[i]);
  net.zero_grad();
  return r.set("loss", loss)
      .set("loss_min", loss_min)
      .set("loss_max", loss_max)
      .set("change_min", change_min)
      .set("change_max", change_max)
      .set("beta", beta);
}

Record validation(nn::Sequential& net, const data::DigitsSplit& data, Record r) {
  NoGradGuard no_grad;
  net.eval();
  r.set("val_accuracy", predictions(net(data.X_val), data.y_val).accuracy);
  net.train();
  return r;
}

std::vector<Record> train_and_probe(const Context& c, const std::string& variant, uint64_t seed) {
  Model m = build(variant, seed);
  nn::Sequential& net = *m.net;
  optim::SGD sgd(net.parameters(), {.lr = lesson_training(c.settings).lr});
  data::DataLoader loader(c.data.X_train, c.data.y_train, {.batch_size = 64, .shuffle = true, .seed = seed});
  const Record keys = Record().set("variant", variant).set("seed", double(seed));
  std::vector<Record> records;
  int64_t step = 0;
  for (int64_t epoch = 0; epoch < lesson_training(c.settings).epochs; ++epoch)
    for (const data::Batch& batch : loader.epoch()) {
      for (auto& noise : m.noise) noise->redraw();
      if (step % kEvery == 0)
        records.push_back(validation(net, c.data, probe(net, batch, Record(keys).set("step", double(step)))));
      sgd.zero_grad();
      cross_entropy(net(batch.inputs), batch.targets).backward();
      sgd.step();
      ++step;
    }
  // The trained model: no batch follows, so its landscape fields are NaN.
  Record last = Record(keys).set("step", double(step));
  for (const char* field : {"loss", "loss_min", "loss_max", "change_min", "change_max", "beta"}) last.set(field, NAN);
  records.push_back(validation(net, c.data, last));
  return records;
}

// One record per run: the landscape's figures averaged over the probes (loss range = max - min,
// ln of beta) and the trained model's validation accuracy.
std::vector<Record> summaries(const std::vector<Record>& records, const std::vector<uint64_t>& seeds) {
  std::vector<Record> out;
  for (const Variant& v : variants())
    for (uint64_t seed : seeds) {
      const auto run = where_num(where(records, {{"variant", v.name}}), "seed", double(seed));
      if (run.empty()) continue;
      double range = 0.0, log_beta = 0.0;
      size_t probes = 0;
      for (const Record& r : run) {
        if (std::isnan(r.num("beta"))) continue;
        range += r.num("loss_max") - r.num("loss_min");
        log_beta += std::log(r.num("beta"));
        ++probes;
      }
      out.push_back(Record()
                        .set("variant", v.name)
                        .set("seed", double(seed))
                        .set("loss_range", range / double(probes))
                        .set("log_beta", log_beta / double(probes))
                        .set("val_accuracy", run.back().num("val_accuracy")));
    }
  return out;
}

class SanturkarSmoothness : public Experiment {
 public:
  SanturkarSmoothness()
      : Experiment(
            {"santurkar_smoothness", "BatchNorm smooths the loss landscape; covariate shift does not matter",
             "normalization keeps activations in a well-conditioned range against an ill-conditioned loss surface: "
             "with BatchNorm the loss changes less along the gradient and the gradient is more predictive (a smaller "
             "effective beta-smoothness) than without; and this, not a reduction of internal covariate shift, is what "
             "helps, since BatchNorm followed by noise that shifts every unit's distribution at every step trains as "
             "well",
             "Santurkar et al. 2018, \"How Does Batch Normalization Help Optimization?\", Sec. 2.1 (Fig. 2) and "
             "Sec. 3.1 (Fig. 4); lesson, \"Why this matters\""}) {}
  std::string setup(const Settings& s) const override {
    std::string names;
    for (const Variant& v : variants()) names += (names.empty() ? "" : ", ") + v.label;
    return cat("The lesson's network and training (8 x [Linear(64), norm, Tanh], SGD lr 0.05, batch 64, ",
               lesson_training(s).epochs, " epoch(s)) as ", names,
               ". Noisy BatchNorm: after each BatchNorm every unit is scaled by U(0.5, 1.5) and shifted by U(-1, 1), "
               "drawn anew each step (eval mode passes it through). Every ",
               kEvery,
               " steps, on that step's batch with gradient g (training mode; weights, running statistics "
               "and noise restored after): the loss L(w - eta g) and the gradient's change |g(w) - g(w - eta g)| "
               "for eta in ",
               joined(etas()),
               " (1 to 8 times the lr), and the effective beta = max over eta of |g(w) - g(w - eta g)| / |eta g|; "
               "and the validation accuracy (eval mode).");
  }
  std::string rule() const override {
    return cat(
        "per run, the loss range (max - min of L(w - eta g)) and ln beta are averaged over the probes. BatchNorm is "
        "\"smoother\" than a network without a norm when, seed by seed, that network's loss range minus "
        "BatchNorm's and its ln beta minus BatchNorm's both have means above 0. Noisy BatchNorm \"trains as "
        "BatchNorm\" when BatchNorm's final validation accuracy minus noisy BatchNorm's has a mean below ",
        kNoisyTolerance,
        ". Three parts: smoother than no norm with PyTorch's init (the lesson's), smoother than no norm with "
        "Xavier's tanh init (which learns without a norm), and noisy BatchNorm trains as BatchNorm. Held: all "
        "three; held partly: some; did not hold: none. LayerNorm is shown, not judged.",
        margin_rule(
            cat(kLossFloor, " of loss range, ", kBetaFloor, " of ln beta and ", kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    const double cost = double(lesson_training(c.settings).epochs) * 1437.0 * 8.0 * 3.0;
    for (const Variant& v : variants())
      append(jobs,
             seed_jobs(c.settings.seeds, cost, [&c, v](uint64_t seed) { return train_and_probe(c, v.name, seed); }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const auto runs = summaries(records, s.seeds);
    const auto of = [&](const std::string& v) { return where(runs, {{"variant", v}}); };
    auto smoother = [&](const std::string& reference, std::string& text) {
      const Comparison range =
          compare_to_threshold(paired_differences(of(reference), of("batch"), "loss_range", NAN), 0.0, kLossFloor);
      const Comparison beta =
          compare_to_threshold(paired_differences(of(reference), of("batch"), "log_beta", NAN), 0.0, kBetaFloor);
      const Truth t = all_of({above(range), above(beta)});
      text += cat(label_of(reference), " minus BatchNorm: loss range ", comparison_text(range), ", ln beta ",
                  comparison_text(beta), " (", truth_text(t, "smoother", "not smoother"), "); ");
      return t;
    };
    std::string why;
    const Truth lesson_init = smoother("none", why), xavier = smoother("none_xavier", why);
    const Comparison noisy = accuracy_gain(of("batch"), of("noisy_batch"), kNoisyTolerance, 0.1);
    why += cat("BatchNorm's accuracy minus noisy BatchNorm's: ", comparison_text(noisy), " (",
               truth_text(below(noisy), "trains as BatchNorm", "falls behind"), ").");
    return {verdict_of({lesson_init, xavier, below(noisy)}), why};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const auto runs = summaries(records, s.seeds);
    std::vector<std::vector<std::string>> rows;
    for (const Variant& v : variants()) {
      const auto mine = where(runs, {{"variant", v.name}});
      const lesson::Spread log_beta = spread(mine, "log_beta");
      rows.push_back({v.label, mean_range(spread(mine, "loss_range")),
                      cat(fixed(std::exp(log_beta.mean), 2), " [", fixed(std::exp(log_beta.min), 2), ", ",
                          fixed(std::exp(log_beta.max), 2), "]"),
                      mean_range(spread(where(records, {{"variant", v.name}}), "change_max")),
                      mean_range(spread(mine, "val_accuracy"))});
    }
    const std::string table =
        "Mean [min, max] over seeds of each run's average over the probes (beta: its geometric mean), and the "
        "trained model's validation accuracy:\n\n" +
        markdown_table(
            {"network", "loss range along g", "effective beta", "largest gradient change (all probes)", "val accuracy"},
            rows) +
        "\n**Second look**: the part that failed compares BatchNorm with a network that does not learn. Under "
        "PyTorch's init the network without a norm is stuck at its starting scale: its loss stays at chance (ln 10, "
        "accuracy about 0.1) and hardly moves along its gradient (a range about 0.01 against BatchNorm's 0.5), and its "
        "effective beta is about 0.3 against 16. Its landscape is flat because the signal fades before the output, and "
        "neither measure tells that flatness from good conditioning. Santurkar et al. compare networks that both "
        "train; here that is the network without a norm under Xavier's tanh init, which learns (\"Careful "
        "initialization instead of normalization\" (careful_init)), and against it BatchNorm is smoother by both "
        "measures (loss range about 0.5 against 1.5, beta about 16 against 25). The lesson's \"than without\" holds "
        "against a network without a norm that trains, not against any.\n";
    return {table, {draw_picture(records, s)}};
  }

 private:
  // Per variant, per probe step: the mean over seeds of each field.
  static std::string draw_picture(const std::vector<Record>& records, const Settings& s) {
    std::string script = "set xlabel 'training step'\nunset key\nset style fill transparent solid 0.25 noborder\n";
    std::string loss = "set title '(a) loss landscape: L(w - eta g), eta in [0.05, 0.4]'\nplot ",
                grads = "set title '(b) gradient predictiveness: |g(w) - g(w - eta g)|'\nset logscale y\nplot ",
                beta = "set title '(c) effective beta-smoothness'\nset key right center\nplot ";
    const std::vector<Variant> all = variants();
    for (size_t i = 0; i < all.size(); ++i) {
      const Variant& v = all[i];
      const auto mine = where(records, {{"variant", v.name}});
      std::vector<std::vector<double>> rows;
      for (int64_t step = 0;; step += kEvery) {
        const auto at = where_num(mine, "step", double(step));
        if (at.empty() || std::isnan(at.front().num("beta"))) break;
        rows.push_back({double(step), spread(at, "loss_min").mean, spread(at, "loss_max").mean,
                        spread(at, "change_min").mean, spread(at, "change_max").mean, spread(at, "beta").mean});
      }
      script += datablock(cat("v", i), rows);
      const std::string sep = i ? ", " : "", style = cat(" lc rgb '", v.colour, "' title '", v.label, "'");
      loss += cat(sep, "$v", i, " using 1:2:3 with filledcurves", style);
      grads += cat(sep, "$v", i, " using 1:4:5 with filledcurves", style);
      beta += cat(sep, "$v", i, " using 1:6 with lines lw 2", style);
    }
    return draw_panels(s.out_dir, "santurkar_smoothness.png",
                       "Santurkar et al.'s Fig. 4 on the lesson's network (mean over seeds)",
                       script + loss + "\n" + grads + "\n" + beta + "\n", 3, 1500, 460);
  }
};

}  // namespace

std::shared_ptr<const Experiment> santurkar_smoothness_experiment() { return std::make_shared<SanturkarSmoothness>(); }

}  // namespace minidl::lab
