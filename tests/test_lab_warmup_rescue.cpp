// The lab's warmup_rescue: each verdict its rule can give, on constructed runs of five seeds.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "registry.hpp"

using namespace minidl::lab;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Losses = std::vector<double>;  // an arm's final validation loss per seed, NaN: diverged

const Losses kStuck{2.95, 2.9, 3.0, 2.95, 2.93}, kTrains{2.3, 2.25, 2.4, 2.3, 2.35};

// The runs as warmup_rescue's jobs record them: post-LN without and with the warmup, pre-LN.
std::vector<Record> runs(const Losses& post, const Losses& post_warm, const Losses& pre) {
  std::vector<Record> records;
  for (const auto& [arm, losses] :
       {std::pair{"post_no_warmup", post}, {"post_warmup", post_warm}, {"pre_no_warmup", pre}})
    for (size_t seed = 0; seed < losses.size(); ++seed) {
      const bool ok = !std::isnan(losses[seed]);
      records.push_back(Record()
                            .set("arm", arm)
                            .set("seed", double(seed))
                            .set("status", ok ? "ok" : "diverged")
                            .set("val_loss", losses[seed]));
    }
  return records;
}

Decision decision(const std::vector<Record>& records) {
  Settings s;
  const Decision d = select_experiments({"warmup_rescue"}).front()->decide(records, s);
  UNSCOPED_INFO(d.why);
  return d;
}
std::string verdict(const std::vector<Record>& records) { return verdict_text(decision(records).verdict); }

}  // namespace

TEST_CASE("lab warmup_rescue: each verdict its rule can give", "[lab][sequence]") {
  CHECK(verdict(runs(kStuck, kTrains, kTrains)) == "held");
  // 4 of 5 on the claim's side still agree.
  CHECK(verdict(runs({2.95, 2.95, 2.95, 2.95, 2.3}, {2.3, 2.3, 2.3, 2.3, 2.8}, kTrains)) == "held");
  CHECK(verdict(runs(kStuck, kStuck, kTrains)) == "held partly");    // (a) holds, the warmup rescues nothing
  CHECK(verdict(runs(kStuck, kTrains, kStuck)) == "held partly");    // pre-LN stuck too: (a) fails, (b) holds
  CHECK(verdict(runs(kTrains, kTrains, kTrains)) == "held partly");  // post-LN trains without a warmup
  CHECK(verdict(runs(kTrains, kStuck, kTrains)) == "did not hold");  // post-LN trains without, stuck with
  // 2 of 5 on the claim's side disagree: undecided runs (2.8) count against the claim.
  CHECK(verdict(runs({2.95, 2.95, 2.8, 2.8, 2.8}, kTrains, kTrains)) == "held partly");
}

TEST_CASE("lab warmup_rescue: an arm with 3 of 5 seeds on the claim's side is undecided", "[lab][sequence]") {
  const Decision d = decision(runs(kStuck, {2.3, 2.3, 2.3, 2.8, 2.95}, kTrains));
  CHECK(verdict_text(d.verdict) == "inconclusive");
  CHECK_THAT(d.why, Catch::Contains("Undecided: post-LN, 50-step warmup."));
  // Undecided beats a failed part: pre-LN 3 of 5, post-LN without a warmup trains.
  CHECK(verdict(runs(kTrains, kTrains, {2.3, 2.3, 2.3, 2.95, 2.95})) == "inconclusive");
}

TEST_CASE("lab warmup_rescue: a run that diverges counts as stuck", "[lab][sequence]") {
  CHECK(verdict(runs({kNaN, kNaN, kNaN, kNaN, kNaN}, kTrains, kTrains)) == "held");
  // In an arm expected to train, two diverged seeds of five leave it undecided.
  CHECK(verdict(runs(kStuck, {kNaN, kNaN, 2.3, 2.3, 2.3}, kTrains)) == "inconclusive");
}

TEST_CASE("lab warmup_rescue: an arm without runs is an error naming it", "[lab][sequence]") {
  CHECK_THROWS_WITH(decision(runs(kStuck, {}, kTrains)), Catch::Contains("no run of arm post_warmup"));
}
