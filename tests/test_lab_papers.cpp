// The lab's chapter of papers (ioffe_fig1, santurkar_smoothness): each rule gives each verdict
// it can give on constructed records.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "registry.hpp"
#include "tools.hpp"

using namespace minidl::lab;

namespace {

const std::vector<double> kSeeds{0, 1, 2};

// Seeds 0, 1, 2 sit 0.005 below, at and above a figure, the same on both sides of a paired
// comparison: the paired differences have no spread, so the floor is the margin.
double jitter(double seed) { return 0.005 * (seed - 1.0); }

Settings quick() {
  Settings s;
  s.quick = true;
  s.seeds = {0, 1, 2};
  return s;
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
                            .set("loss", NAN)
                            .set("loss_min", NAN)
                            .set("loss_max", NAN)
                            .set("change_min", NAN)
                            .set("change_max", NAN)
                            .set("beta", NAN)
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
  std::string experiment, what;
  std::vector<Record> records;
  Verdict expected;
};

std::vector<Case> cases() {
  using V = Verdict;
  const Landscape rough{1.0, 50.0, 0.9}, flat{0.01, 1.0, 0.1};
  return {
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

}  // namespace

TEST_CASE("lab judgements: the papers' experiments on constructed records", "[lab]") {
  std::map<std::string, std::set<Verdict>> seen;
  for (const Case& c : cases()) {
    const Decision decision = select_experiments({c.experiment}).front()->decide(c.records, quick());
    INFO(c.experiment << ": " << c.what << "\n" << decision.why);
    CHECK(verdict_text(decision.verdict) == verdict_text(c.expected));
    seen[c.experiment].insert(c.expected);
  }
  for (const auto& [name, verdicts] : seen) {
    INFO(name << " is tested for each verdict");
    CHECK(verdicts ==
          std::set<Verdict>{Verdict::Held, Verdict::HeldPartly, Verdict::DidNotHold, Verdict::Inconclusive});
  }
}
