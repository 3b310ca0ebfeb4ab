// The lab's sequence chapter: each rule on constructed records gives every verdict it can
// (held, held partly, did not hold, inconclusive), and the exact measurements its experiments
// run (apps/lab/experiments/sequence/checks.hpp) checked directly.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "experiments/sequence/checks.hpp"
#include "experiments/sequence/probes.hpp"
#include "registry.hpp"
#include "support/datasets.hpp"
#include "tools.hpp"

namespace test_lab_sequence_probes {

using minidl::testing::words_split;

using namespace minidl::lab;
using minidl::charlm::NormKind;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Settings three_seeds() {
  Settings s;
  s.seeds = {0, 1, 2};
  return s;
}

// A seed's small spread around a figure: 2 standard errors stay under every floor.
double jitter(double seed) { return 0.002 * (seed - 1.0); }

// init_gradients over its full grid (makemore and xavier at widths 64 and 512, depths 6, 12
// and 24, seeds 0-2): block `layer`'s W2 gradient norm (1 next to the input) of `depth` per
// position, times a seed's jitter; the QKV norm twice it.
using Norms = std::function<double(bool xavier, double width, bool pre, double depth, double layer)>;
std::vector<Record> init_gradients(const Norms& norm) {
  std::vector<Record> records;
  for (const char* init : {"makemore", "xavier"})
    for (double width : {64.0, 512.0})
      for (bool pre : {true, false})
        for (double depth : {6.0, 12.0, 24.0})
          for (double seed : {0.0, 1.0, 2.0})
            for (double layer = 1; layer <= depth; ++layer) {
              const double w2 = norm(init[0] == 'x', width, pre, depth, layer) * (1.0 + jitter(seed));
              records.push_back(Record()
                                    .set("init", init)
                                    .set("width", width)
                                    .set("position", pre ? "pre" : "post")
                                    .set("depth", depth)
                                    .set("seed", seed)
                                    .set("layer", layer)
                                    .set("w2_grad", w2)
                                    .set("qkv_grad", 2.0 * w2));
            }
  return records;
}
// Theorem 1's shapes in every regime: pre-LN flat over blocks and its last block as
// depth^pre_slope (1/sqrt: -0.5), post-LN growing `growth` fold from the first block to the
// last and its last block the same at every depth.
Norms theorem(double growth, double pre_slope = -0.5) {
  return [=](bool, double, bool pre, double depth, double layer) {
    if (pre) return std::pow(depth, pre_slope);
    return std::pow(growth, (layer - depth) / (depth - 1.0));
  };
}

// leak: exact probes for each norm and mode (layer and rms moving `per_example`, the train-mode
// BatchNorms `batch_norm`, eval mode 0), and per BatchNorm its eval-mode minus train-mode gap.
std::vector<Record> leak(double per_example, double batch_norm, double gap) {
  std::vector<Record> records;
  const std::vector<std::pair<NormKind, bool>> probes{{NormKind::Layer, true},  {NormKind::RMS, true},
                                                      {NormKind::Batch, true},  {NormKind::BatchMasked, true},
                                                      {NormKind::Batch, false}, {NormKind::BatchMasked, false}};
  auto keys = [](const std::string& part, NormKind norm, bool train, double seed) {
    return Record()
        .set("part", part)
        .set("norm", minidl::charlm::short_name(norm))
        .set("mode", train ? "train" : "eval")
        .set("seed", seed);
  };
  for (const auto& [norm, train] : probes)
    for (double seed : {0.0, 1.0, 2.0}) {
      const bool bn = norm == NormKind::Batch || norm == NormKind::BatchMasked;
      const double move = !train ? 0.0 : bn ? batch_norm : per_example;
      records.push_back(keys("exact", norm, train, seed)
                            .set("later_token", move)
                            .set("batch_mate", move)
                            .set("status", "ok")
                            .set("train_mode_loss", kNaN)
                            .set("eval_mode_loss", kNaN));
    }
  for (NormKind norm : {NormKind::Batch, NormKind::BatchMasked})
    for (double seed : {0.0, 1.0, 2.0})
      records.push_back(keys("gap", norm, true, seed)
                            .set("later_token", kNaN)
                            .set("batch_mate", kNaN)
                            .set("status", "ok")
                            .set("train_mode_loss", 2.0)
                            .set("eval_mode_loss", 2.0 + gap + jitter(seed)));
  return records;
}

// batch_one: per norm and seed; the cache off by `cache`, layer and rms's modes by `modes`,
// BatchNorm's first token refused or not, and its validation loss `cost` above LayerNorm's 2.2.
std::vector<Record> batch_one(double cache, double modes, bool refused, double cost) {
  std::vector<Record> records;
  for (NormKind norm : {NormKind::Layer, NormKind::RMS, NormKind::Batch, NormKind::BatchMasked})
    for (double seed : {0.0, 1.0, 2.0}) {
      const bool bn = norm == NormKind::Batch || norm == NormKind::BatchMasked;
      records.push_back(Record()
                            .set("norm", minidl::charlm::short_name(norm))
                            .set("seed", seed)
                            .set("status", "ok")
                            .set("val_loss", 2.2 + (bn ? cost : 0.0) + jitter(seed))
                            .set("cache_difference", cache)
                            .set("train_vs_eval", bn ? 0.5 : modes)
                            .set("first_token_refused", bn && refused ? 1.0 : 0.0)
                            .set("prefix_refused", 0.0)
                            .set("refusal", "-"));
    }
  return records;
}

struct Case {
  std::string experiment, what;
  std::vector<Record> records;
  Verdict expected;
  Settings settings = three_seeds();
};

std::vector<Case> cases() {
  using V = Verdict;
  return {
      {"init_gradients", "post-LN grows 8-fold, pre-LN flat and 1/sqrt(L)", init_gradients(theorem(8.0)), V::Held},
      {"init_gradients", "post-LN flat too", init_gradients(theorem(1.0)), V::HeldPartly},
      {"init_gradients", "pre-LN's last block as 1/L, not 1/sqrt(L)", init_gradients(theorem(8.0, -1.0)),
       V::HeldPartly},
      {"init_gradients", "post-LN flat and shrinking as 1/sqrt(L), pre-LN growing and steady",
       init_gradients([](bool, double, bool pre, double depth, double layer) {
         return pre ? std::pow(4.0, layer - depth) : 1.0 / std::sqrt(depth);
       }),
       V::DidNotHold},
      {"init_gradients", "post-LN's growth 2.05, within 0.1 of 2", init_gradients(theorem(2.05)), V::Inconclusive},
      {"leak", "zero for the per-example norms, BatchNorm moves, a gap", leak(0.0, 0.1, 0.3), V::Held},
      {"leak", "no gap", leak(0.0, 0.1, 0.0), V::HeldPartly},
      {"leak", "LayerNorm moves, BatchNorm does not, no gap", leak(1e-7, 0.0, -0.2), V::DidNotHold},
      {"leak", "gap 0.06, within 0.02 of 0.05", leak(0.0, 0.1, 0.06), V::Inconclusive},
      {"batch_one", "cache within, modes equal, refused, a cost", batch_one(1e-6, 0.0, true, 0.3), V::Held},
      {"batch_one", "BatchNorm better than LayerNorm", batch_one(1e-6, 0.0, true, -0.3), V::HeldPartly},
      {"batch_one", "nothing as claimed", batch_one(1e-2, 1e-3, false, -0.3), V::DidNotHold},
      {"batch_one", "a cost of 0.03, within 0.05 of 0", batch_one(1e-6, 0.0, true, 0.03), V::Inconclusive},
  };
}

std::shared_ptr<const Experiment> experiment(const std::string& name) { return select_experiments({name}).front(); }

}  // namespace

TEST_CASE("lab sequence: each rule on constructed records", "[lab][lab_sequence]") {
  std::map<std::string, std::set<Verdict>> seen;
  for (const Case& c : cases()) {
    const Decision decision = experiment(c.experiment)->decide(c.records, c.settings);
    INFO(c.experiment << ": " << c.what << "\n" << decision.why);
    CHECK(verdict_text(decision.verdict) == verdict_text(c.expected));
    seen[c.experiment].insert(c.expected);
  }
  for (const char* name : {"init_gradients", "leak", "batch_one"}) {
    INFO(name);
    CHECK(seen[name] ==
          std::set<Verdict>{Verdict::Held, Verdict::HeldPartly, Verdict::DidNotHold, Verdict::Inconclusive});
  }
}

TEST_CASE("lab sequence init_gradients: the verdict names the regimes where each part holds", "[lab][lab_sequence]") {
  // Post-LN grows under Xavier only, pre-LN's last block as 1/sqrt(L) at width 512 only.
  const auto records = init_gradients([](bool xavier, double width, bool pre, double depth, double layer) {
    return pre ? std::pow(depth, width > 100 ? -0.5 : 0.0)
               : theorem(xavier ? 8.0 : 1.0)(xavier, width, pre, depth, layer);
  });
  const Decision d = experiment("init_gradients")->decide(records, three_seeds());
  CHECK(d.verdict == Verdict::Held);
  CHECK_THAT(d.why, Catch::Contains("Post-LN grows toward the output under: Xavier, width 64; Xavier, width 512."));
  CHECK_THAT(d.why, Catch::Contains("shrinks as 1/sqrt(L) under: makemore's init, width 512; Xavier, width 512."));
}

TEST_CASE("lab sequence leak: later tokens and batch mates move nothing under LayerNorm and RMSNorm, to the last bit",
          "[lab][lab_sequence]") {
  for (NormKind norm : {NormKind::Layer, NormKind::RMS})
    for (bool train : {true, false})
      for (uint64_t seed : {0, 1}) {
        const LeakMoves m = measure_leak(words_split(), norm, train, seed);
        INFO(minidl::charlm::short_name(norm) << (train ? " train" : " eval") << " seed " << seed);
        CHECK(m.later_token == 0.0);
        CHECK(m.batch_mate == 0.0);
      }
}

TEST_CASE("lab sequence leak: train-mode BatchNorm moves earlier logits, eval mode does not", "[lab][lab_sequence]") {
  for (NormKind norm : {NormKind::Batch, NormKind::BatchMasked})
    for (uint64_t seed : {0, 1}) {
      INFO(minidl::charlm::short_name(norm) << " seed " << seed);
      const LeakMoves train = measure_leak(words_split(), norm, true, seed);
      CHECK(train.later_token > 1e-4);
      CHECK(train.batch_mate > 1e-4);
      const LeakMoves eval = measure_leak(words_split(), norm, false, seed);
      CHECK(eval.later_token == 0.0);
      CHECK(eval.batch_mate == 0.0);
    }
}

TEST_CASE("lab sequence batch_one: the cache equals full passes, LayerNorm's modes are equal bit for bit",
          "[lab][lab_sequence]") {
  for (NormKind norm : {NormKind::Layer, NormKind::RMS, NormKind::Batch, NormKind::BatchMasked}) {
    INFO(minidl::charlm::short_name(norm));
    minidl::charlm::ModelOptions options;
    options.norm = norm;
    auto model = fresh_model(options, 3);
    model->eval();
    CHECK(cache_difference(*model, words_split(), 3) <= 1e-4);
    const double modes = mode_difference(*model, words_split());
    if (norm == NormKind::Layer || norm == NormKind::RMS) CHECK(modes == 0.0);
    else CHECK(modes > 1e-3);
    CHECK_FALSE(model->is_training());
  }
}

TEST_CASE("lab sequence batch_one: train-mode BatchNorm refuses the first token at batch size 1, not a longer prefix",
          "[lab][lab_sequence]") {
  for (NormKind norm : {NormKind::Batch, NormKind::BatchMasked}) {
    INFO(minidl::charlm::short_name(norm));
    minidl::charlm::ModelOptions options;
    options.norm = norm;
    auto model = fresh_model(options, 0);
    const auto [refused, message] = refused_in_training(*model, true);
    CHECK(refused);
    CHECK_THAT(message, Catch::Contains("Expected more than 1 value per channel when training"));
    CHECK_FALSE(refused_in_training(*model, false).first);
  }
  auto model = fresh_model({}, 0);  // LayerNorm
  CHECK_FALSE(refused_in_training(*model, true).first);
}

TEST_CASE("lab sequence: the probes' errors name what was expected and what came", "[lab][lab_sequence]") {
  auto model = fresh_model({}, 0);
  CHECK_THROWS_WITH(weight_gradient_norms(*model, "mlp.c_proj.weight"),
                    "transformer.h.0.mlp.c_proj.weight has no gradient: run backward first");
  CHECK_THROWS_WITH(max_abs_difference(minidl::Tensor::zeros({2, 3}), minidl::Tensor::zeros({3, 2})),
                    "max_abs_difference: expected equal shapes, got [2, 3] and [3, 2]");
}

}  // namespace test_lab_sequence_probes
