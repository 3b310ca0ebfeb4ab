// The lab's DyT experiments (dyt_deep_net, dyt_charlm): each rule gives each verdict it can
// give on constructed records; dyt_charlm's Fig. 2 figures are left out of its verdict.
#include <catch2/catch.hpp>
#include <string>

#include "experiments/experiments.hpp"
#include "registry.hpp"
#include "tools.hpp"

using namespace minidl::lab;

namespace {

const std::vector<double> kSeeds{0, 1, 2};

// Seeds 0, 1, 2 sit 0.005 below, at and above a figure on both sides of a paired comparison:
// the differences have no spread, so the floor is the margin.
double jitter(double seed) { return 0.005 * (seed - 1.0); }

Settings quick() {
  Settings s;
  s.quick = true;
  s.seeds = {0, 1, 2};
  return s;
}

std::string verdict(const std::string& experiment, const std::vector<Record>& records) {
  const Decision decision = select_experiments({experiment}).front()->decide(records, quick());
  UNSCOPED_INFO(experiment << ": " << decision.why);
  return verdict_text(decision.verdict);
}

// dyt_deep_net: no norm at 0.1, LayerNorm at 0.9, DyT at `dyt` validation accuracy.
std::vector<Record> dyt_deep_net(double dyt) {
  std::vector<Record> records;
  for (const char* norm : {"none", "layer", "dyt"})
    for (double seed : kSeeds) {
      const std::string name = norm;
      const double accuracy = (name == "none" ? 0.1 : name == "layer" ? 0.9 : dyt) + jitter(seed);
      records.push_back(Record()
                            .set("norm", name)
                            .set("seed", seed)
                            .set("status", "ok")
                            .set("train_loss", 0.5)
                            .set("val_accuracy", accuracy));
    }
  return records;
}

// dyt_charlm: LayerNorm's validation loss 2.3, DyT's 2.3 + gap; Fig. 2's points ride along.
std::vector<Record> dyt_charlm(double gap) {
  std::vector<Record> records;
  for (const char* norm : {"layer", "dyt"})
    for (double seed : kSeeds)
      records.push_back(Record()
                            .set("kind", "run")
                            .set("norm", norm)
                            .set("position", "pre")
                            .set("seed", seed)
                            .set("status", "ok")
                            .set("train_loss", 2.2)
                            .set("val_loss", (std::string(norm) == "dyt" ? 2.3 + gap : 2.3) + jitter(seed)));
  for (double x : {-2.0, 0.0, 2.0})
    records.push_back(Record().set("kind", "point").set("block", 0.0).set("channel", 0.0).set("x", x).set("y", x));
  return records;
}

}  // namespace

TEST_CASE("lab dyt_deep_net: each verdict its rule can give", "[lab]") {
  CHECK(verdict("dyt_deep_net", dyt_deep_net(0.88)) == "held");          // learns, within 0.05 of LayerNorm
  CHECK(verdict("dyt_deep_net", dyt_deep_net(0.7)) == "held partly");    // learns, 0.2 below LayerNorm
  CHECK(verdict("dyt_deep_net", dyt_deep_net(0.1)) == "did not hold");   // stuck as without a norm
  CHECK(verdict("dyt_deep_net", dyt_deep_net(0.86)) == "inconclusive");  // 0.04 below, within 0.02 of 0.05
}

TEST_CASE("lab dyt_charlm: each verdict its rule can give", "[lab][sequence]") {
  CHECK(verdict("dyt_charlm", dyt_charlm(0.0)) == "held");            // as well
  CHECK(verdict("dyt_charlm", dyt_charlm(-0.1)) == "held");           // better
  CHECK(verdict("dyt_charlm", dyt_charlm(0.2)) == "did not hold");    // worse
  CHECK(verdict("dyt_charlm", dyt_charlm(0.055)) == "inconclusive");  // within 0.01 of 0.05
}
