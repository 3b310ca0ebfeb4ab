// Several seeds of one experiment: the seed lists a user writes, the spread over seeds and
// the table digits prints, the refusal of BatchNorm runs that would meet a batch of one, and
// each epoch's validation figures.
#include <cmath>

#include "runs/seeds.hpp"
#include "support/check.hpp"

namespace test_seeds {

using namespace minidl;
using lesson::NormKind;

namespace {

lesson::RunResult finished(NormKind norm, uint64_t seed, float train_loss, float val_loss, float accuracy) {
  lesson::RunResult r;
  r.norm = norm;
  r.seed = seed;
  r.train_loss = train_loss;
  r.val_loss = val_loss;
  r.val_accuracy = accuracy;
  return r;
}

lesson::RunResult diverged(NormKind norm, uint64_t seed) {
  lesson::RunResult r = finished(norm, seed, NAN, NAN, NAN);
  r.curve = {{1, 1, NAN}};
  r.failure = "diverged";
  return r;
}

}  // namespace

TEST_CASE("parse_seeds reads single seeds, ranges and their mixtures in order", "[lesson][seeds]") {
  CHECK(lesson::parse_seeds("0-4") == std::vector<uint64_t>{0, 1, 2, 3, 4});
  CHECK(lesson::parse_seeds("0,3,7") == std::vector<uint64_t>{0, 3, 7});
  CHECK(lesson::parse_seeds("9,0-2") == std::vector<uint64_t>{9, 0, 1, 2});
  CHECK(lesson::parse_seeds("5") == std::vector<uint64_t>{5});
  CHECK(lesson::parse_seeds("3-3") == std::vector<uint64_t>{3});
  CHECK(lesson::parse_seeds("18446744073709551615") == std::vector<uint64_t>{18446744073709551615ull});
  CHECK(lesson::parse_seeds("18446744073709551614-18446744073709551615").size() == 2);  // no wrap-around
  CHECK(lesson::parse_seeds("0-999").size() == 1000);
}

TEST_CASE("parse_seeds refuses bad lists, quoting the list and naming the fault", "[lesson][seeds]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "--seeds is empty: give seeds such as 0-4 or 0,3,7"},
      {"3-1", "--seeds \"3-1\": the range 3-1 runs backwards (write 1-3)"},
      {"x", "--seeds \"x\": \"x\" is not a seed (expected a non-negative integer or a range such as 0-4)"},
      {"1,", "--seeds \"1,\": \"\" is not a seed"},
      {"-1", "--seeds \"-1\": \"\" is not a seed"},
      {"1-2-3", "--seeds \"1-2-3\": \"2-3\" is not a seed"},
      {"0x10", "--seeds \"0x10\": \"0x10\" is not a seed"},
      {" 1", "--seeds \" 1\": \" 1\" is not a seed"},
      {"18446744073709551616", "\"18446744073709551616\" is not a seed"},
      {"0,0", "--seeds \"0,0\": seed 0 is listed twice"},
      {"0-4,2", "--seeds \"0-4,2\": seed 2 is listed twice"},
      {"0-1000", "--seeds \"0-1000\": more than 1000 seeds"},
      {"0-18446744073709551615", "more than 1000 seeds"},
  };
  for (const auto& [list, message] : cases) {
    INFO("--seeds \"" << list << "\"");
    CHECK_THROWS_AS(lesson::parse_seeds(list), UsageError);
    CHECK_THROWS_WITH(lesson::parse_seeds(list), Catch::Contains(message));
  }
}

TEST_CASE("seeds_text writes a run of seeds as a range", "[lesson][seeds]") {
  CHECK(lesson::seeds_text({0, 1, 2, 3, 4}) == "0-4");
  CHECK(lesson::seeds_text({0, 3, 7}) == "0, 3, 7");
  CHECK(lesson::seeds_text({4}) == "4");
  CHECK(lesson::seeds_text({1, 2}) == "1, 2");
}

TEST_CASE("spread_of gives mean, sample sd and range of the finite values", "[lesson][seeds]") {
  const lesson::Spread s = lesson::spread_of({1.0, 2.0, 4.0, NAN});
  CHECK(s.count == 3);
  CHECK(s.mean == Approx(7.0 / 3.0));
  CHECK(s.sd ==
        Approx(std::sqrt(
            ((1 - 7.0 / 3) * (1 - 7.0 / 3) + (2 - 7.0 / 3) * (2 - 7.0 / 3) + (4 - 7.0 / 3) * (4 - 7.0 / 3)) / 2.0)));
  CHECK(s.min == 1.0);
  CHECK(s.max == 4.0);
  CHECK(lesson::spread_of({2.5}).sd == 0.0);
  CHECK(lesson::spread_of({NAN}).count == 0);
}

TEST_CASE("seed_table shows each norm's mean and range and the first seed's figures", "[lesson][seeds]") {
  const std::vector<lesson::RunResult> runs{finished(NormKind::None, 0, 2.30f, 2.31f, 0.10f),
                                            finished(NormKind::None, 1, 2.20f, 2.21f, 0.20f),
                                            finished(NormKind::Batch, 1, 0.30f, 0.40f, 0.90f),
                                            finished(NormKind::Batch, 0, 0.10f, 0.20f, 0.96f),
                                            diverged(NormKind::Layer, 0),
                                            finished(NormKind::Layer, 1, 0.5f, 0.6f, 0.8f)};
  const std::string table = lesson::seed_table(runs, {NormKind::None, NormKind::Batch, NormKind::Layer}, {0, 1});
  INFO(table);
  CHECK_THAT(table, Catch::StartsWith("over seeds 0, 1: mean [min, max]; right of the bar, seed 0 alone\n"));
  CHECK_THAT(table, Catch::Contains("\nno normalization  2.250 [2.200, 2.300]   2.260 [2.210, 2.310]   "
                                    "0.150 [0.100, 0.200]   | 2.300       0.100\n"));
  CHECK_THAT(table, Catch::Contains("\nBatchNorm1d       0.200 [0.100, 0.300]   0.300 [0.200, 0.400]   "
                                    "0.930 [0.900, 0.960]   | 0.100       0.960\n"));
  CHECK_THAT(table, Catch::Contains("\nLayerNorm         0.500 [0.500, 0.500]") &&
                        Catch::Contains("| did not finish   (1 of 2 runs did not finish)\n"));
}

TEST_CASE("figure_text prints usual figures fixed and figures out of range in exponent form", "[lesson][seeds]") {
  CHECK(lesson::figure_text(2.30258f) == "2.303");
  CHECK(lesson::figure_text(2.30258, 4) == "2.3026");
  CHECK(lesson::figure_text(999999.0) == "999999.000");
  CHECK(lesson::figure_text(1e6) == "1.000e+06");
  CHECK(lesson::figure_text(3.5386064e31) == "3.539e+31");
  CHECK(lesson::figure_text(-3.5386064e31, 4) == "-3.5386e+31");
  CHECK(lesson::figure_text(NAN) == "nan");
  CHECK(lesson::figure_text(-INFINITY) == "-inf");
}

TEST_CASE("seed_table widens a column for figures out of range, so columns never run together", "[lesson][seeds]") {
  // digits --lr 1e30 trains to finite losses near 3e31: once printed as 32-digit numbers
  // that ran the columns together.
  const std::vector<lesson::RunResult> runs{
      finished(NormKind::None, 0, 3.1e31f, 4e31f, 0.10f), finished(NormKind::None, 1, 1e31f, 2e31f, 0.12f),
      finished(NormKind::Batch, 0, 0.10f, 0.20f, 0.96f), finished(NormKind::Batch, 1, 0.30f, 0.40f, 0.90f)};
  const std::string table = lesson::seed_table(runs, {NormKind::None, NormKind::Batch}, {0, 1});
  INFO(table);
  const std::string loss_gap(2, ' '), usual_gap(3, ' ');
  CHECK(table == "over seeds 0, 1: mean [min, max]; right of the bar, seed 0 alone\n" + std::string(18, ' ') +
                     "training loss" + std::string(21, ' ') + "validation loss" + std::string(19, ' ') +
                     "val accuracy" + std::string(11, ' ') + "| train loss  val accuracy\n" +
                     "no normalization  2.050e+31 [1.000e+31, 3.100e+31]" + loss_gap +
                     "3.000e+31 [2.000e+31, 4.000e+31]" + loss_gap + "0.110 [0.100, 0.120]" + usual_gap +
                     "| 3.100e+31   0.100\n" + "BatchNorm1d       0.200 [0.100, 0.300]" + std::string(14, ' ') +
                     "0.300 [0.200, 0.400]" + std::string(14, ' ') + "0.930 [0.900, 0.960]" + usual_gap +
                     "| 0.100       0.960\n");
}

TEST_CASE("refusal: a BatchNorm run that would meet a batch of one example is refused before training",
          "[lesson][seeds]") {
  lesson::TrainOptions o;
  o.norm = NormKind::Batch;
  o.seed = 3;
  o.batch_size = 2;  // 1437 = 718 x 2 + 1
  REQUIRE(lesson::refusal(o, 1437).has_value());
  CHECK(*lesson::refusal(o, 1437) ==
        "run \"batch\" (BatchNorm1d, seed 3) refused: batch size 2 on the 1437-example training split leaves a last "
        "batch of one example, and BatchNorm1d in training mode needs more than one value per channel; pass "
        "--drop-last or choose another batch size");
  o.drop_last = true;
  CHECK_FALSE(lesson::refusal(o, 1437).has_value());
  o.batch_size = 1;  // every batch holds one example, drop_last or not
  CHECK_THAT(*lesson::refusal(o, 1437), Catch::Contains("batch size 1 puts one example in every batch"));
  o.batch_size = 64;  // 1437 = 22 x 64 + 29
  o.drop_last = false;
  CHECK_FALSE(lesson::refusal(o, 1437).has_value());
  CHECK(lesson::refusal(o, 1409).has_value());  // 22 x 64 + 1
  for (NormKind norm : {NormKind::None, NormKind::Layer, NormKind::RMS, NormKind::Group}) {
    o.norm = norm;
    o.batch_size = 1;
    CHECK_FALSE(lesson::refusal(o, 1437).has_value());
  }
}

TEST_CASE("validation_csv holds each epoch's validation figures per run and seed", "[lesson][seeds]") {
  lesson::RunResult r = finished(NormKind::Layer, 4, 0.1f, 0.2f, 0.9f);
  r.validation = {{1, 23, 0.75f, 0.5f}, {2, 46, 0.25f, 0.875f}};
  CHECK(lesson::validation_csv({r}) ==
        "run,seed,epoch,step,val_loss,val_accuracy\nlayer,4,1,23,0.75,0.5\nlayer,4,2,46,0.25,0.875\n");
}

}  // namespace test_seeds
