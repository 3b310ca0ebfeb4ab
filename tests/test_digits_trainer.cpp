// digits' trainer options (--optimizer, --momentum, --weight-decay, --betas, --warmup,
// --schedule, --clip): each refused combination is one line and exit code 2; the summary
// records the setup with its defaults; each option changes training, and the defaults keep
// the lesson's bits; each option's updates are PyTorch's formulas, computed by hand.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/check.hpp"
#include "support/digits_cli.hpp"
#include "support/digits_replay.hpp"
#include "training/trainer_setup.hpp"

namespace test_digits_trainer {

using namespace minidl;
using minidl::testing::DigitsScratch;
using minidl::testing::slurp;

namespace {

// A short run of one norm and seed: 1 epoch, shallow, so each case takes a fraction of a second.
std::vector<std::string> short_run(const DigitsScratch& s, std::vector<std::string> extra) {
  std::vector<std::string> args{"--quiet",
                                "--norm",
                                "layer",
                                "--seeds",
                                "0",
                                "--epochs",
                                "1",
                                "--depth",
                                "2",
                                "--jobs",
                                "1",
                                "--curves",
                                s.file("curves.csv"),
                                "--summary",
                                s.file("summary.json")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("digits refuses trainer options that make no sense, one line, exit code 2", "[cli][trainer]") {
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {{"--optimizer", "rmsprop"}, "--optimizer: unknown optimizer \"rmsprop\" (choose sgd, adam or adamw)"},
      {{"--optimizer", "adam", "--momentum", "0.9"}, "--momentum applies to --optimizer sgd only, not adam"},
      {{"--optimizer", "adamw", "--momentum", "0.9"}, "--momentum applies to --optimizer sgd only, not adamw"},
      {{"--betas", "0.9,0.99"}, "--betas applies to --optimizer adam or adamw only, not sgd"},
      {{"--optimizer", "adam", "--betas", "0.9"}, "--betas: \"0.9\" is not two numbers B1,B2"},
      {{"--optimizer", "adam", "--betas", "0.9,0.99,0.5"}, "is not two numbers B1,B2"},
      {{"--optimizer", "adam", "--betas", "0.9,x"}, "--betas: \"x\" is not a number"},
      {{"--optimizer", "adam", "--betas", "0.9,1"}, "--betas: each beta must be in [0, 1), got 1"},
      {{"--momentum", "-0.5"}, "--momentum must be a number >= 0, got -0.5"},
      {{"--momentum", "nan"}, "--momentum must be a number >= 0, got nan"},
      {{"--weight-decay", "-1"}, "--weight-decay must be a number >= 0, got -1"},
      {{"--weight-decay", "abc"}, "--weight-decay: \"abc\" is not a number"},
      {{"--warmup", "-3"}, "--warmup must be at least 0, got -3"},
      {{"--warmup", "23"}, "--warmup 23 is not shorter than the run's 23 steps"},
      {{"--schedule", "linear"}, "--schedule: unknown schedule \"linear\" (choose constant, cosine or step)"},
      {{"--clip", "0"}, "--clip must be a positive number, got 0"},
      {{"--clip", "inf"}, "--clip must be a positive number, got inf"},
  };
  for (const Bad& bad : cases) {
    DigitsScratch s;
    testing::ProcessResult result = s.run(short_run(s, bad.args));
    INFO(bad.message << "\nstderr: " << result.err);
    CHECK(result.exit_code == 2);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK_THAT(result.err, Catch::Contains(bad.message));
    CHECK_FALSE(std::filesystem::exists(s.file("summary.json")));
  }
}

TEST_CASE("digits' summary records the trainer setup with its defaults", "[cli][trainer]") {
  DigitsScratch s;
  testing::ProcessResult result = s.run(short_run(s, {"--optimizer", "adamw", "--betas", "0.8,0.99", "--warmup", "5",
                                                      "--schedule", "cosine", "--clip", "1.5", "--lr", "0.003"}));
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  const auto trainer = nlohmann::json::parse(slurp(s.file("summary.json")))["settings"]["trainer"];
  CHECK(trainer["optimizer"] == "adamw");
  CHECK(trainer["betas"] == nlohmann::json::array({0.8, 0.99}));
  CHECK(trainer["weight_decay"] == 0.01);  // AdamW's default
  CHECK(trainer["warmup"] == 5);
  CHECK(trainer["warmup_start_factor"] == lesson::kWarmupStartFactor);
  CHECK(trainer["schedule"] == "cosine");
  CHECK(trainer["clip"] == 1.5);
  CHECK_FALSE(trainer.contains("momentum"));

  DigitsScratch plain;
  REQUIRE(plain.run(short_run(plain, {})).exit_code == 0);
  const auto defaults = nlohmann::json::parse(slurp(plain.file("summary.json")))["settings"]["trainer"];
  CHECK(defaults == nlohmann::json::parse(R"({"optimizer": "sgd", "momentum": 0.0, "weight_decay": 0.0, "warmup": 0,
      "warmup_start_factor": 0.01, "schedule": "constant", "clip": null})"));
}

TEST_CASE("digits: each trainer option changes the curve, and the defaults given explicitly keep its bits",
          "[cli][trainer]") {
  DigitsScratch s;
  auto curve = [&](std::vector<std::string> extra) {
    testing::ProcessResult result = s.run(testing::with_options(short_run(s, {}), extra));
    INFO("stderr: " << result.err);
    REQUIRE(result.exit_code == 0);
    return slurp(s.file("curves.csv"));
  };
  const std::string lesson = curve({});
  CHECK(curve({"--optimizer", "sgd", "--momentum", "0", "--weight-decay", "0", "--warmup", "0", "--schedule",
               "constant"}) == lesson);
  for (const std::vector<std::string>& changed : {std::vector<std::string>{"--momentum", "0.9"},
                                                  {"--weight-decay", "0.1"},
                                                  {"--optimizer", "adam"},
                                                  {"--optimizer", "adamw"},
                                                  {"--optimizer", "adam", "--betas", "0.5,0.9"},
                                                  {"--warmup", "10"},
                                                  {"--schedule", "cosine"},
                                                  {"--clip", "0.01"}}) {
    INFO(changed[0] << " " << changed[1]);
    CHECK(curve(changed) != lesson);
  }
  // StepLR halves the lr at the end of each epoch: the second epoch differs.
  const std::string two_epochs = curve({"--epochs", "2"});
  const std::string stepped = curve({"--epochs", "2", "--schedule", "step"});
  CHECK(stepped != two_epochs);
  CHECK(stepped.substr(0, lesson.size()) == lesson);  // the first epoch is the lesson's
}

// Each option against a hand computation: digits trains 6 steps (2 epochs of 3 batches) from
// weights and in an order the test chose, and its saved weights must be what PyTorch's
// documented formulas give for the same gradients (support/hand_trainer.hpp): SGD's
// g + weight_decay p, a momentum buffer that starts at the first gradient and then is
// momentum b + g (no dampening), Adam's bias-corrected moments (AdamW: decay apart from them),
// LinearLR's warmup factors, CosineAnnealingLR's and StepLR's closed forms, clip_grad_norm_'s
// scaling by max_norm / (total norm + 1e-6).
//
// How close: the program holds float weights and the reference double ones, so each step the
// two differ by the rounding of an update (an ulp of the weight) plus the float rounding of
// gradients taken at weights an ulp apart (with another summation order, up to 512 terms'
// rounding: 3e-5 |g|, times lr); over 6 steps that stays far within 1e-6 + 1e-5 |w|. A wrong
// formula moves weights by a fraction of lr |g| (about 1e-3 here): a hundred times the bound.
// Adam divides each gradient by its own running size, so a rounding error e of a gradient g
// moves a weight by up to lr e / |g|, large where g is a nearly cancelled sum: its cases get
// ten times the bound, and none clips (clipping shrinks every g toward its rounding).
TEST_CASE("digits' trainer options update the weights as PyTorch's formulas say, step by step", "[cli][trainer]") {
  testing::DigitsReplay replay;
  const auto order = testing::strided_order(replay.train_examples(), 2, 7, 100);
  const double lr = 0.1, pi = std::acos(-1.0);
  const auto constant = [lr](int64_t) { return lr; };
  // LinearLR(start_factor 0.01, total_iters W) then, from step W + 1, CosineAnnealingLR over the
  // remaining steps: the lr of step s (1-based) is the schedules' value after s - 1 steps.
  const auto warmup = [lr](int64_t w) {
    return [lr, w](int64_t s) {
      return lr * (0.01 + 0.99 * double(s - 1) / double(w));  // from start_factor 0.01 to 1
    };
  };
  const auto cosine = [lr, pi](int64_t from, int64_t steps) {
    return [=](int64_t s) { return lr * (1.0 + std::cos(pi * double(s - 1 - from) / double(steps))) / 2.0; };
  };
  struct Case {
    std::vector<std::string> options;
    testing::HandOptimizer optimizer;
  };
  const std::vector<Case> cases = {
      {{}, {.lr = constant}},
      {{"--momentum", "0.9"}, {.lr = constant, .momentum = 0.9}},
      {{"--weight-decay", "0.5"}, {.lr = constant, .weight_decay = 0.5}},
      {{"--momentum", "0.5", "--weight-decay", "0.5"}, {.lr = constant, .momentum = 0.5, .weight_decay = 0.5}},
      {{"--warmup", "4"}, {.lr = [&](int64_t s) { return s <= 4 ? warmup(4)(s) : lr; }}},
      {{"--schedule", "cosine"}, {.lr = cosine(0, 6)}},
      {{"--warmup", "2", "--schedule", "cosine"},
       {.lr = [&](int64_t s) { return s <= 2 ? warmup(2)(s) : cosine(2, 4)(s); }}},
      {{"--schedule", "step"}, {.lr = [&](int64_t s) { return lr * std::pow(0.5, double((s - 1) / 3)); }}},
      {{"--clip", "0.05"}, {.lr = constant, .clip = 0.05}},
      {{"--clip", "0.05", "--momentum", "0.9"}, {.lr = constant, .momentum = 0.9, .clip = 0.05}},
      {{"--optimizer", "adam"}, {.lr = constant, .adam_betas = std::array{0.9, 0.999}}},
      {{"--optimizer", "adam", "--betas", "0.5,0.9", "--weight-decay", "0.5"},
       {.lr = constant, .weight_decay = 0.5, .adam_betas = std::array{0.5, 0.9}}},
      {{"--optimizer", "adamw"},
       {.lr = constant, .weight_decay = 0.01, .adam_betas = std::array{0.9, 0.999}, .decoupled_weight_decay = true}},
      {{"--optimizer", "adamw", "--weight-decay", "0.5"},
       {.lr = constant, .weight_decay = 0.5, .adam_betas = std::array{0.9, 0.999}, .decoupled_weight_decay = true}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> options = c.options;
    options.insert(options.end(), {"--lr", "0.1"});
    INFO("digits " << Catch::Detail::stringify(options));
    const testing::DigitsReplay::Run run = replay.run(order, options);
    const testing::HandRun hand = replay.by_hand(order, c.optimizer);
    if (c.optimizer.clip) CHECK(hand.clipped_steps == 6);  // every step clipped, or the case would test nothing
    REQUIRE(run.losses.size() == hand.losses.size());
    for (size_t s = 0; s < hand.losses.size(); ++s) CHECK(run.losses[s] == Approx(hand.losses[s]).epsilon(1e-5));
    const double scale = c.optimizer.adam_betas ? 10.0 : 1.0;  // Adam: see above
    CHECK(testing::worst_excess(run.weights, hand.weights, 1e-6 * scale, 1e-5 * scale) <= 1.0);
  }
}

}  // namespace test_digits_trainer
