// The lab's warmup_gap: each verdict its rule can give, on constructed runs of five seeds.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "registry.hpp"

namespace test_lab_warmup_gap {

using namespace minidl::lab;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Losses = std::vector<double>;  // an arm's final validation loss per seed, NaN: diverged

const Losses kWarm{2.35, 2.38, 2.33, 2.36, 2.34}, kStuck{2.95, 2.96, 2.83, 2.95, 2.84},
    kPre{2.23, 2.25, 2.22, 2.24, 2.22};

Losses plus(const Losses& losses, double d) {
  Losses out;
  for (double l : losses) out.push_back(l + d);
  return out;
}

// The runs as warmup_gap's jobs record them (seeds 5-9): post-LN without and with the warmup, pre-LN.
std::vector<Record> runs(const Losses& post, const Losses& post_warm, const Losses& pre) {
  std::vector<Record> records;
  for (const auto& [arm, losses] :
       {std::pair{"post_no_warmup", post}, {"post_warmup", post_warm}, {"pre_no_warmup", pre}})
    for (size_t k = 0; k < losses.size(); ++k)
      records.push_back(Record()
                            .set("arm", arm)
                            .set("seed", double(k + 5))
                            .set("status", std::isnan(losses[k]) ? "diverged" : "ok")
                            .set("val_loss", losses[k]));
  return records;
}

Decision decision(const std::vector<Record>& records) {
  const Decision d = select_experiments({"warmup_gap"}).front()->decide(records, Settings{});
  UNSCOPED_INFO(d.why);
  return d;
}
std::string verdict(const std::vector<Record>& records) { return verdict_text(decision(records).verdict); }

}  // namespace

TEST_CASE("lab warmup_gap: each verdict its rule can give", "[lab][sequence]") {
  CHECK(verdict(runs(kStuck, kWarm, kPre)) == "held");
  CHECK(verdict(runs(plus(kWarm, 0.1), kWarm, kPre)) == "held partly");    // (a) fails: 0.1 is below 0.2 - 0.05
  CHECK(verdict(runs(kStuck, kWarm, plus(kWarm, 0.2))) == "held partly");  // (b) fails: pre-LN worse by 0.2
  CHECK(verdict(runs(kWarm, kWarm, plus(kWarm, 0.2))) == "did not hold");
  CHECK_THAT(decision(runs(kStuck, kWarm, kPre)).why, Catch::Contains("mean d_a 0.554 +- 0.050"));
}

TEST_CASE("lab warmup_gap: a mean within its margin of its threshold is inconclusive, named", "[lab][sequence]") {
  Decision d = decision(runs(plus(kWarm, 0.22), kWarm, kPre));
  CHECK(verdict_text(d.verdict) == "inconclusive");
  CHECK_THAT(d.why, Catch::Contains("Within the margin: part (a)."));
  d = decision(runs(kStuck, kWarm, plus(kWarm, 0.03)));
  CHECK(verdict_text(d.verdict) == "inconclusive");
  CHECK_THAT(d.why, Catch::Contains("Within the margin: part (b)."));
  // The seeds' spread widens the margin: mean d_a 0.28, 2 standard errors 0.36.
  CHECK(verdict(runs({2.45, 2.48, 2.43, 2.46, 3.34}, kWarm, kPre)) == "inconclusive");
}

TEST_CASE("lab warmup_gap: a run that diverges counts ln 27", "[lab][sequence]") {
  CHECK(verdict(runs({kNaN, kNaN, kNaN, kNaN, kNaN}, kWarm, kPre)) == "held");
  CHECK(verdict(runs(kStuck, kWarm, {kNaN, kNaN, kNaN, kNaN, kNaN})) == "held partly");
}

TEST_CASE("lab warmup_gap: an arm without runs is an error", "[lab][sequence]") {
  CHECK_THROWS_WITH(decision(runs({}, kWarm, kPre)), Catch::Contains("0 records against 5"));
}

}  // namespace test_lab_warmup_gap
