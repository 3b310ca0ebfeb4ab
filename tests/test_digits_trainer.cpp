// digits' trainer options (--optimizer, --momentum, --weight-decay, --betas, --warmup,
// --schedule, --clip): each refused combination is one line and exit code 2; the summary
// records the setup with its defaults; each option changes training, and the defaults keep
// the lesson's bits.
#include <fstream>
#include <nlohmann/json.hpp>

#include "lesson/trainer_setup.hpp"
#include "support/check.hpp"
#include "support/digits_cli.hpp"

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
