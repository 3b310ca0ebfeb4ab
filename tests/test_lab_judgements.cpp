// The lab's judgements on constructed records: every training experiment gives each verdict its
// rule can give (held, held partly, did not hold, inconclusive), so a rule that always said
// "held" fails here; and the margin helper they share (apps/lab/tools.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "models/arch.hpp"
#include "registry.hpp"
#include "tools.hpp"
#include "training/trainer_setup.hpp"

namespace test_lab_judgements {

using namespace minidl::lab;
using minidl::lesson::InitScheme;
using minidl::lesson::NormKind;

namespace {

const std::vector<double> kSeeds{0, 1, 2};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Seeds 0, 1, 2 sit 0.01 below, at and above a figure: 2 standard errors (0.012) stay under the
// floors, so the floor is the margin and a figure is within it exactly when the test says so.
double jitter(double seed) { return 0.01 * (seed - 1.0); }

std::string norm_name(NormKind norm) { return minidl::lesson::short_name(norm); }

// One run's record as train_record writes it: its keys, norm, seed, status and figures (NaN
// unless the run is "ok").
Record run(Record keys, NormKind norm, double seed, double accuracy, double loss = 0.5,
           const std::string& status = "ok") {
  const bool ok = status == "ok";
  return keys.set("norm", norm_name(norm))
      .set("seed", seed)
      .set("status", status)
      .set("train_loss", ok ? loss + jitter(seed) : kNaN)
      .set("val_accuracy", ok ? accuracy + jitter(seed) : kNaN);
}

Settings quick() {
  Settings s;
  s.quick = true;
  s.seeds = {0, 1, 2};
  return s;
}

// ---- builders, one per experiment, over its --quick grid ----

// depth: depths 2 and 8; the network without a norm at `none_loss`, GroupNorm at
// `group_accuracy`, the other norms at 0.9.
std::vector<Record> depth(double none_loss, double group_accuracy) {
  std::vector<Record> records;
  for (double d : {2.0, 8.0})
    for (NormKind norm : all_norms())
      for (double seed : kSeeds) {
        const double accuracy = norm == NormKind::None ? 0.1 : norm == NormKind::Group ? group_accuracy : 0.9;
        records.push_back(
            run(Record().set("depth", d), norm, seed, accuracy, norm == NormKind::None ? none_loss : 0.3));
      }
  return records;
}

// learning_rate: lr 0.05 and 1; every norm at 0.9 at lr 0.05, at `at_1` (its norm's entry; NaN:
// diverged) at lr 1.
std::vector<Record> learning_rate(const std::map<NormKind, double>& at_1) {
  std::vector<Record> records;
  for (double lr : {0.05, 1.0})
    for (NormKind norm : all_norms())
      for (double seed : kSeeds) {
        const double a = lr == 1.0 ? at_1.at(norm) : 0.9;
        records.push_back(run(Record().set("lr", lr), norm, seed, a, 0.5, std::isnan(a) ? "diverged" : "ok"));
      }
  return records;
}

// init_scale: scales 0.5 and 2; per norm, the final loss rises by range.at(norm) from one to the other.
std::vector<Record> init_scale(const std::map<NormKind, double>& range) {
  std::vector<Record> records;
  for (NormKind norm : all_norms())
    for (double seed : kSeeds) {
      records.push_back(run(Record().set("init_scale", 0.5), norm, seed, 0.9, 0.3));
      records.push_back(run(Record().set("init_scale", 2.0), norm, seed, 0.9, 0.3 + range.at(norm)));
    }
  return records;
}

// batch_size: sizes 1, 2, 64 in both regimes; BatchNorm at batch 2 `bn2`, LayerNorm at 2 `ln2`
// and at 1 `ln1`, everything else at 0.9; BatchNorm at batch 1 refused.
std::vector<Record> batch_size(double bn2, double ln2, double ln1) {
  std::vector<Record> records;
  for (const char* regime : {"epochs", "steps"})
    for (double b : {1.0, 2.0, 64.0})
      for (NormKind norm : {NormKind::Batch, NormKind::Layer, NormKind::Group, NormKind::RMS, NormKind::None})
        for (double seed : kSeeds) {
          const Record keys = Record().set("regime", regime).set("batch_size", b);
          if (norm == NormKind::Batch && b == 1) {
            records.push_back(run(keys, norm, seed, kNaN, kNaN, "refused"));
            continue;
          }
          double accuracy = 0.9;
          if (norm == NormKind::Batch && b == 2) accuracy = bn2;
          if (norm == NormKind::Layer) accuracy = b == 2 ? ln2 : b == 1 ? ln1 : 0.9;
          records.push_back(run(keys, norm, seed, accuracy));
        }
  return records;
}

// scaled_lr_batch: sizes 1, 2, 64 as batch_size's fixed-epochs regime; BatchNorm at batch 2 `bn2`,
// LayerNorm at 2 `ln2` and at 1 `ln1`.
std::vector<Record> scaled_lr_batch(double bn2, double ln2, double ln1) {
  return where(batch_size(bn2, ln2, ln1), {{"regime", "epochs"}});
}

// eval_mode: eval mode at 0.9, training mode in batches of 2 at `train2`, the batch-of-one
// formula predicting `classes` classes.
std::vector<Record> eval_mode(double train2, double classes) {
  std::vector<Record> records;
  for (double seed : kSeeds) {
    auto add = [&](const std::string& evaluation, double accuracy, double predicted) {
      records.push_back(Record()
                            .set("seed", seed)
                            .set("evaluation", evaluation)
                            .set("val_accuracy", accuracy + jitter(seed))
                            .set("classes", predicted));
    };
    add("eval mode", 0.9, 10);
    add("train mode, all 360 at once", 0.9, 10);
    add("train mode, batches of 64", 0.9, 10);
    add("train mode, batches of 2", train2, 10);
    add("batch of one (formula)", 0.1, classes);
  }
  return records;
}

// running_stats: momentum 0.1's mean gap `gap` and running minus population accuracy `lead`.
std::vector<Record> running_stats(double gap, double lead) {
  std::vector<Record> records;
  for (const char* momentum : {"0.1", "0.01"})
    for (double seed : kSeeds)
      records.push_back(Record()
                            .set("momentum", momentum)
                            .set("seed", seed)
                            .set("mean_gap", gap + 0.001 * seed)
                            .set("val_accuracy", 0.9 + lead)
                            .set("val_accuracy_population", 0.9));
  return records;
}

// careful_init: depth 8 without a norm, Xavier at `xavier` and Kaiming at `kaiming`.
std::vector<Record> careful_init(double xavier, double kaiming) {
  std::vector<Record> records;
  const std::vector<std::tuple<NormKind, InitScheme, double>> cases{{NormKind::None, InitScheme::PyTorch, 0.1},
                                                                    {NormKind::None, InitScheme::Xavier, xavier},
                                                                    {NormKind::None, InitScheme::Kaiming, kaiming},
                                                                    {NormKind::Layer, InitScheme::PyTorch, 0.9}};
  for (const auto& [norm, init, accuracy] : cases)
    for (double seed : kSeeds)
      records.push_back(
          run(Record().set("depth", 8.0).set("init", minidl::lesson::init_name(init)), norm, seed, accuracy));
  return records;
}

// cnn_batch_size: batch 1, 2, 64; BatchNorm2d at batch 2 `bn2` and at batch 1 `bn1` (NaN:
// refused), GroupNorm at batch 2 `gn2`, everything else at 0.9.
std::vector<Record> cnn_batch_size(double bn2, double gn2, double bn1) {
  std::vector<Record> records;
  for (double b : {1.0, 2.0, 64.0})
    for (NormKind norm : {NormKind::Batch, NormKind::Group, NormKind::Layer, NormKind::Instance})
      for (double seed : kSeeds) {
        double accuracy = 0.9;
        if (norm == NormKind::Batch && b == 2) accuracy = bn2;
        if (norm == NormKind::Batch && b == 1) accuracy = bn1;
        if (norm == NormKind::Group && b == 2) accuracy = gn2;
        records.push_back(
            run(Record().set("batch_size", b), norm, seed, accuracy, 0.5, std::isnan(accuracy) ? "refused" : "ok"));
      }
  return records;
}

// pre_post_norm: 4 and 16 blocks, lr 0.01, warmup 0 or 10 steps; accuracy(pre-norm?, warmup, blocks).
std::vector<Record> pre_post_norm(const std::function<double(bool, double, double)>& accuracy) {
  std::vector<Record> records;
  for (bool pre : {true, false})
    for (NormKind norm : {NormKind::Layer, NormKind::RMS})
      for (double blocks : {4.0, 16.0})
        for (double warmup : {0.0, 10.0})
          for (double seed : kSeeds) {
            const Record keys = Record()
                                    .set("arch", pre ? "resmlp-pre" : "resmlp-post")
                                    .set("blocks", blocks)
                                    .set("lr", 0.01)
                                    .set("warmup", warmup);
            records.push_back(run(keys, norm, seed, accuracy(pre, warmup, blocks)));
          }
  return records;
}

// adam_norm: SGD and Adam at each Adam lr of the settings' grid (1e-3; and 1e-2 without
// --quick); the network without a norm reaches `adam_accuracy(lr)` under Adam, 0.1 under SGD.
std::vector<Record> adam_norm(const Settings& s, const std::function<double(double)>& adam_accuracy) {
  std::vector<Record> records;
  std::vector<std::pair<std::string, double>> trainers{{"sgd", 0.05}, {"adam", 1e-3}};
  if (!s.quick) trainers.push_back({"adam", 1e-2});
  for (const auto& [optimizer, lr] : trainers)
    for (NormKind norm : {NormKind::None, NormKind::Layer})
      for (double seed : kSeeds) {
        const double accuracy = norm == NormKind::Layer ? 0.9 : optimizer == "sgd" ? 0.1 : adam_accuracy(lr);
        records.push_back(run(Record().set("optimizer", optimizer).set("lr", lr), norm, seed, accuracy));
      }
  return records;
}

// ioffe_fig1 over its --quick schedule (300 steps, a point every 10): per network a flat
// accuracy curve and percentiles that drift linearly by `shift` over training.
std::vector<Record> ioffe(double batch_accuracy, double none_accuracy, double batch_shift, double none_shift) {
  std::vector<Record> records;
  for (const char* variant : {"none", "batch"})
    for (double seed : kSeeds)
      for (double step = 0; step <= 300; step += 10) {
        const bool batch = std::string(variant) == "batch";
        const double drift = (batch ? batch_shift : none_shift) * step / 300.0;
        records.push_back(Record()
                              .set("variant", variant)
                              .set("seed", seed)
                              .set("step", step)
                              .set("val_accuracy", (batch ? batch_accuracy : none_accuracy) + jitter(seed))
                              .set("p15", -1.0 + drift)
                              .set("p50", drift)
                              .set("p85", 1.0 - drift));
      }
  return records;
}

// santurkar_smoothness over its --quick schedule (one epoch of 23 steps, a probe every 5, then the
// trained model's row): per variant its loss range, beta and final accuracy.
struct Landscape {
  double range, beta, accuracy;
};
std::vector<Record> santurkar(const std::map<std::string, Landscape>& figures) {
  std::vector<Record> records;
  for (const auto& [variant, f] : figures)
    for (double seed : kSeeds) {
      for (double step = 0; step <= 20; step += 5)
        records.push_back(Record()
                              .set("variant", variant)
                              .set("seed", seed)
                              .set("step", step)
                              .set("loss", 2.0)
                              .set("loss_min", 1.9)
                              .set("loss_max", 1.9 + f.range + jitter(seed))
                              .set("change_min", 0.1)
                              .set("change_max", 1.0)
                              .set("beta", f.beta)
                              .set("val_accuracy", 0.5));
      records.push_back(Record()
                            .set("variant", variant)
                            .set("seed", seed)
                            .set("step", 23.0)
                            .set("loss", kNaN)
                            .set("loss_min", kNaN)
                            .set("loss_max", kNaN)
                            .set("change_min", kNaN)
                            .set("change_max", kNaN)
                            .set("beta", kNaN)
                            .set("val_accuracy", f.accuracy + jitter(seed)));
    }
  return records;
}

// BatchNorm and LayerNorm at range 0.2, beta 5, accuracy 0.95; the others as given.
std::vector<Record> santurkar(Landscape none, Landscape xavier, double noisy_accuracy) {
  const Landscape normed{0.2, 5.0, 0.95};
  return santurkar({{"none", none},
                    {"none_xavier", xavier},
                    {"batch", normed},
                    {"noisy_batch", {0.2, 5.0, noisy_accuracy}},
                    {"layer", normed}});
}

struct Case {
  std::string experiment;
  std::string what;
  std::vector<Record> records;
  Verdict expected;
  Settings settings = quick();
};

std::vector<Case> cases() {
  using V = Verdict;
  const Landscape rough{1.0, 50.0, 0.9}, flat{0.01, 1.0, 0.1};
  Settings full;
  full.seeds = {0, 1, 2};
  // Per norm: the network without one, BatchNorm, LayerNorm, RMSNorm, GroupNorm.
  auto per_norm = [](double none, double batch, double layer, double rms, double group) {
    return std::map<NormKind, double>{{NormKind::None, none},
                                      {NormKind::Batch, batch},
                                      {NormKind::Layer, layer},
                                      {NormKind::RMS, rms},
                                      {NormKind::Group, group}};
  };
  auto pre_post = [](double post_16, double post_warm_16) {
    return [=](bool pre, double warmup, double blocks) {
      if (pre || blocks == 4) return 0.9;
      return warmup > 0 ? post_warm_16 : post_16;
    };
  };
  return {
      {"depth", "none stuck, every norm learns", depth(2.3, 0.9), V::Held},
      {"depth", "GroupNorm does not learn", depth(2.3, 0.3), V::HeldPartly},
      {"depth", "none learns, GroupNorm does not", depth(1.0, 0.3), V::DidNotHold},
      {"depth", "GroupNorm at 0.49, within 0.02 of 0.5", depth(2.3, 0.49), V::Inconclusive},
      {"depth", "none's loss 2.03, within 0.05 of 2.0", depth(2.03, 0.9), V::Inconclusive},
      {"learning_rate", "every norm reaches 0.8 at lr 1, none at 0.05 only",
       learning_rate(per_norm(0.3, 0.9, 0.9, 0.9, 0.9)), V::Held},
      {"learning_rate", "only BatchNorm goes further (LayerNorm diverges at lr 1)",
       learning_rate(per_norm(0.3, 0.9, kNaN, 0.3, 0.3)), V::HeldPartly},
      {"learning_rate", "no norm goes further", learning_rate(per_norm(0.9, 0.9, 0.9, 0.9, 0.9)), V::DidNotHold},
      {"learning_rate", "LayerNorm at lr 1 within 0.02 of 0.8, the others above",
       learning_rate(per_norm(0.3, 0.9, 0.805, 0.9, 0.9)), V::Inconclusive},
      {"init_scale", "every norm's range is smaller", init_scale(per_norm(2.0, 0.1, 0.1, 0.1, 0.1)), V::Held},
      {"init_scale", "BatchNorm's range is larger", init_scale(per_norm(2.0, 3.0, 0.1, 0.1, 0.1)), V::HeldPartly},
      {"init_scale", "every norm's range is larger", init_scale(per_norm(2.0, 3.0, 3.0, 3.0, 3.0)), V::DidNotHold},
      {"init_scale", "LayerNorm's range within 0.05 of none's", init_scale(per_norm(2.0, 0.1, 1.97, 0.1, 0.1)),
       V::Inconclusive},
      {"batch_size", "BatchNorm struggles at 2, LayerNorm works at 1", batch_size(0.3, 0.8, 0.7), V::Held},
      {"batch_size", "BatchNorm at 2 only 0.05 below its best", batch_size(0.85, 0.8, 0.7), V::HeldPartly},
      {"batch_size", "BatchNorm fine at 2, LayerNorm fails at 1", batch_size(0.85, 0.8, 0.3), V::DidNotHold},
      {"batch_size", "LayerNorm at 1 within 0.02 of 0.5", batch_size(0.3, 0.8, 0.51), V::Inconclusive},
      {"batch_size", "LayerNorm at 2 within 0.02 of BatchNorm", batch_size(0.3, 0.31, 0.7), V::Inconclusive},
      {"scaled_lr_batch", "BatchNorm struggles at 2, LayerNorm works at 1", scaled_lr_batch(0.3, 0.8, 0.7), V::Held},
      {"scaled_lr_batch", "BatchNorm at 2 only 0.05 below 64", scaled_lr_batch(0.85, 0.8, 0.7), V::HeldPartly},
      {"scaled_lr_batch", "BatchNorm fine at 2, LayerNorm fails at 1", scaled_lr_batch(0.85, 0.8, 0.3), V::DidNotHold},
      {"scaled_lr_batch", "LayerNorm at 1 within 0.02 of 0.5", scaled_lr_batch(0.3, 0.8, 0.51), V::Inconclusive},
      {"eval_mode", "training mode worse, one class", eval_mode(0.5, 1), V::Held},
      {"eval_mode", "training mode better, one class", eval_mode(0.95, 1), V::HeldPartly},
      {"eval_mode", "training mode better, three classes", eval_mode(0.95, 3), V::DidNotHold},
      {"eval_mode", "training mode 0.01 below eval mode", eval_mode(0.89, 1), V::Inconclusive},
      {"running_stats", "small gap, same accuracy", running_stats(0.05, 0.0), V::Held},
      {"running_stats", "large gap, same accuracy", running_stats(0.5, 0.0), V::HeldPartly},
      {"running_stats", "large gap, accuracy 0.05 apart", running_stats(0.5, -0.05), V::DidNotHold},
      {"running_stats", "accuracy 0.009 apart, within one example of 0.01", running_stats(0.05, 0.009),
       V::Inconclusive},
      {"running_stats", "gap 0.19, within 0.02 of 0.2", running_stats(0.19, 0.0), V::Inconclusive},
      {"careful_init", "both learn", careful_init(0.9, 0.9), V::Held},
      {"careful_init", "Kaiming does not", careful_init(0.9, 0.5), V::HeldPartly},
      {"careful_init", "neither learns", careful_init(0.5, 0.5), V::DidNotHold},
      {"careful_init", "Kaiming within 0.02 of 0.8", careful_init(0.9, 0.81), V::Inconclusive},
      {"cnn_batch_size", "rises, flat, trains at 1", cnn_batch_size(0.5, 0.88, 0.6), V::Held},
      {"cnn_batch_size", "BatchNorm2d does not rise", cnn_batch_size(0.88, 0.88, 0.6), V::HeldPartly},
      {"cnn_batch_size", "no rise, GroupNorm not flat, refused at 1", cnn_batch_size(0.88, 0.5, kNaN), V::DidNotHold},
      {"cnn_batch_size", "BatchNorm2d's rise 0.1, on the threshold", cnn_batch_size(0.8, 0.88, 0.6), V::Inconclusive},
      {"pre_post_norm", "post-norm fails at 16 blocks without warmup, trains with it",
       pre_post_norm(pre_post(0.1, 0.9)), V::Held},
      {"pre_post_norm", "warmup does not help post-norm", pre_post_norm(pre_post(0.1, 0.1)), V::HeldPartly},
      {"pre_post_norm", "post-norm trains everywhere", pre_post_norm(pre_post(0.9, 0.9)), V::DidNotHold},
      {"pre_post_norm", "post-norm with warmup at 16 blocks within the margin", pre_post_norm(pre_post(0.1, 0.81)),
       V::Inconclusive},
      {"adam_norm", "Adam does not rescue it", adam_norm(quick(), [](double) { return 0.3; }), V::Held},
      {"adam_norm", "Adam rescues it at lr 0.01 only", adam_norm(full, [](double lr) { return lr > 5e-3 ? 0.9 : 0.3; }),
       V::HeldPartly, full},
      {"adam_norm", "Adam rescues it", adam_norm(quick(), [](double) { return 0.9; }), V::DidNotHold},
      {"adam_norm", "Adam within 0.02 of 0.8", adam_norm(quick(), [](double) { return 0.79; }), V::Inconclusive},
      {"ioffe_fig1", "faster and steadier with BatchNorm", ioffe(0.9, 0.6, 0.2, 2.0), V::Held},
      {"ioffe_fig1", "faster, but its percentiles move more", ioffe(0.9, 0.6, 3.0, 1.0), V::HeldPartly},
      {"ioffe_fig1", "slower and moving more", ioffe(0.6, 0.9, 3.0, 1.0), V::DidNotHold},
      {"ioffe_fig1", "accuracy 0.01 apart, within 0.02", ioffe(0.61, 0.6, 0.2, 2.0), V::Inconclusive},
      {"ioffe_fig1", "movement 0.05 apart, within 0.1", ioffe(0.9, 0.6, 1.0, 1.05), V::Inconclusive},
      {"santurkar_smoothness", "smoother than both, noisy trains", santurkar(rough, rough, 0.94), V::Held},
      {"santurkar_smoothness", "the lesson's no-norm network is flatter", santurkar(flat, rough, 0.94), V::HeldPartly},
      {"santurkar_smoothness", "rougher than both, noisy falls behind", santurkar(flat, flat, 0.5), V::DidNotHold},
      {"santurkar_smoothness", "Xavier's range within 0.05 of BatchNorm's", santurkar(rough, {0.22, 50.0, 0.9}, 0.94),
       V::Inconclusive},
      {"santurkar_smoothness", "noisy 0.04 behind, within 0.02 of 0.05", santurkar(rough, rough, 0.91),
       V::Inconclusive},
  };
}

std::shared_ptr<const Experiment> experiment(const std::string& name) { return select_experiments({name}).front(); }

}  // namespace

TEST_CASE("lab judgements: each experiment's rule on constructed records", "[lab]") {
  for (const Case& c : cases()) {
    const Decision decision = experiment(c.experiment)->decide(c.records, c.settings);
    INFO(c.experiment << ": " << c.what << "\n" << decision.why);
    CHECK(verdict_text(decision.verdict) == verdict_text(c.expected));
  }
}

TEST_CASE("lab judgements: every training experiment is tested for each verdict", "[lab]") {
  std::map<std::string, std::set<Verdict>> seen;
  for (const Case& c : cases()) seen[c.experiment].insert(c.expected);
  for (const char* name :
       {"depth", "learning_rate", "init_scale", "batch_size", "eval_mode", "running_stats", "careful_init",
        "cnn_batch_size", "pre_post_norm", "adam_norm", "scaled_lr_batch", "ioffe_fig1", "santurkar_smoothness"}) {
    INFO(name);
    CHECK(seen[name] ==
          std::set<Verdict>{Verdict::Held, Verdict::HeldPartly, Verdict::DidNotHold, Verdict::Inconclusive});
  }
}

TEST_CASE("lab compare_to_threshold: the margin is 2 standard errors, at least the floor", "[lab]") {
  // One value: the floor alone.
  CHECK(compare_to_threshold({0.81}, 0.8, 0.02).side == Side::Within);
  CHECK(compare_to_threshold({0.83}, 0.8, 0.02).side == Side::Above);
  CHECK(compare_to_threshold({0.77}, 0.8, 0.02).side == Side::Below);
  // Mean 0.85, sd 0.1 over 3: 2 standard errors are 0.115, wider than the floor.
  const Comparison wide = compare_to_threshold({0.75, 0.85, 0.95}, 0.8, 0.02);
  CHECK(wide.side == Side::Within);
  CHECK(wide.margin == Approx(2.0 * 0.1 / std::sqrt(3.0)).epsilon(1e-12));
  CHECK(compare_to_threshold({0.75, 0.85, 0.95}, 0.7, 0.02).side == Side::Above);
  // NaN is left out.
  CHECK(compare_to_threshold({0.9, kNaN}, 0.8, 0.02).side == Side::Above);
}

TEST_CASE("lab compare_to_threshold: no value or no floor is refused", "[lab]") {
  CHECK_THROWS_WITH(compare_to_threshold({kNaN}, 0.8, 0.02),
                    Catch::Matchers::Contains("compare_to_threshold: no finite value among 1"));
  CHECK_THROWS_WITH(compare_to_threshold({0.9}, 0.8, 0.0),
                    Catch::Matchers::Contains("compare_to_threshold: the floor must be positive, got 0"));
}

TEST_CASE("lab verdict_of: an unsure part gives inconclusive only when it could tip the verdict", "[lab]") {
  using T = Truth;
  CHECK(verdict_of({T::Yes, T::Yes}) == Verdict::Held);
  CHECK(verdict_of({T::No, T::No}) == Verdict::DidNotHold);
  CHECK(verdict_of({T::Yes, T::No}) == Verdict::HeldPartly);
  CHECK(verdict_of({T::Yes, T::No, T::Unsure}) == Verdict::HeldPartly);
  CHECK(verdict_of({T::Yes, T::Unsure}) == Verdict::Inconclusive);
  CHECK(verdict_of({T::No, T::Unsure}) == Verdict::Inconclusive);
  CHECK(verdict_of({T::Unsure}) == Verdict::Inconclusive);
  CHECK_THROWS_WITH(verdict_of({}), Catch::Matchers::Contains("verdict_of: a rule needs at least one part"));
  CHECK(all_of({T::Yes, T::Unsure}) == T::Unsure);
  CHECK(all_of({T::No, T::Unsure}) == T::No);
  CHECK(any_of({T::Yes, T::Unsure}) == T::Yes);
  CHECK(any_of({T::No, T::Unsure}) == T::Unsure);
  CHECK(greater({2, 2}, {1, 1}) == T::Yes);
  CHECK(greater({1, 3}, {2, 2}) == T::Unsure);
  CHECK(greater({1, 2}, {2, 2}) == T::No);
  CHECK(verdict_text(Verdict::Inconclusive) == "inconclusive");
}

TEST_CASE("lab paired_differences: seed by seed, refusing unmatched seeds", "[lab]") {
  const std::vector<Record> a{Record().set("seed", 0.0).set("x", 0.9), Record().set("seed", 1.0).set("x", kNaN)};
  const std::vector<Record> b{Record().set("seed", 1.0).set("x", 0.5), Record().set("seed", 0.0).set("x", 0.4)};
  const std::vector<double> d = paired_differences(a, b, "x", 0.0);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == Approx(0.5));
  CHECK(d[1] == Approx(-0.5));  // the NaN counts as 0
  CHECK_THROWS_WITH(paired_differences(a, {b[0]}, "x", 0.0),
                    Catch::Matchers::Contains("paired_differences: seed 0 has 0 records on the other side"));
  CHECK_THROWS_WITH(paired_differences({a[0]}, b, "x", 0.0),
                    Catch::Matchers::Contains("paired_differences: 1 records against 2, expected one per seed each"));
}

}  // namespace test_lab_judgements
