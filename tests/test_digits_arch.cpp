// digits --arch resmlp-pre|resmlp-post, --blocks, --expansion, --dropout, --init and
// --summary-model: what they build, what they train, and the combinations refused with one
// line and exit code 2.
#ifdef MINIDL_DIGITS_EXE
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "minidl/minidl.hpp"
#include "models/arch.hpp"
#include "support/check.hpp"
#include "support/digits_cli.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_digits_arch {

using namespace minidl;
using minidl::testing::ProcessResult;
using minidl::testing::run_digits;
using minidl::testing::TempDir;

namespace {

std::vector<std::string> state_names(const nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& entry : model.state_dict()) names.push_back(entry.name);
  return names;
}

}  // namespace

TEST_CASE("build_model builds the resmlp archs with PyTorch's state_dict names", "[lesson][arch]") {
  lesson::DeepNetOptions net{.width = 8};
  Generator gen(0);
  auto pre = lesson::build_model(lesson::NormKind::RMS, net, {.arch = lesson::Arch::ResMLPPre, .blocks = 2}, gen);
  CHECK(state_names(*pre) == std::vector<std::string>{"0.weight", "0.bias", "1.norm.weight", "1.mlp.0.weight",
                                                      "1.mlp.0.bias", "1.mlp.2.weight", "1.mlp.2.bias", "2.norm.weight",
                                                      "2.mlp.0.weight", "2.mlp.0.bias", "2.mlp.2.weight",
                                                      "2.mlp.2.bias", "3.weight", "4.weight", "4.bias"});
  auto post = lesson::build_model(lesson::NormKind::Layer, net, {.arch = lesson::Arch::ResMLPPost, .blocks = 1}, gen);
  CHECK(state_names(*post) == std::vector<std::string>{"0.weight", "0.bias", "1.norm.weight", "1.norm.bias",
                                                       "1.mlp.0.weight", "1.mlp.0.bias", "1.mlp.2.weight",
                                                       "1.mlp.2.bias", "2.weight", "2.bias"});
  CHECK((*post)(Tensor::ones({3, 64})).shape() == Shape{3, 10});
  // The mlp arch is the lesson's deep_net, draw for draw.
  Generator a(4), b(4);
  auto mlp = lesson::build_model(lesson::NormKind::None, {}, {}, a);
  auto lesson_net = lesson::deep_net(lesson::NormKind::None, {}, b);
  minidl::testing::check_close(mlp->at<nn::Linear>(0).weight, lesson_net->at<nn::Linear>(0).weight, 0.0, 0.0);
}

TEST_CASE("init schemes xavier and kaiming redraw every Linear with the gain of the activation after it",
          "[lesson][arch]") {
  lesson::DeepNetOptions net{.depth = 3, .width = 200};
  Generator gen(1);
  auto xavier = lesson::build_model(lesson::NormKind::None, net, {.init = lesson::InitScheme::Xavier}, gen);
  // Linear(64, 200) then Tanh: U(-a, a), a = 5/3 sqrt(6 / 264); the last Linear(200, 10): gain 1.
  auto max_abs = [](const Tensor& t) {
    float m = 0.0f;
    for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.data()[i]));
    return double(m);
  };
  const double first_bound = 5.0 / 3.0 * std::sqrt(6.0 / 264.0), last_bound = std::sqrt(6.0 / 210.0);
  CHECK(max_abs(xavier->at<nn::Linear>(0).weight) <= first_bound);
  CHECK(max_abs(xavier->at<nn::Linear>(0).weight) > 0.99 * first_bound);
  CHECK(max_abs(xavier->at<nn::Linear>(6).weight) <= last_bound);
  CHECK(max_abs(xavier->at<nn::Linear>(6).weight) > 0.95 * last_bound);
  CHECK(max_abs(xavier->at<nn::Linear>(0).bias) == 0.0);
  // kaiming_normal_ fan_in with tanh's gain: std 5/3 / sqrt(200) for the hidden Linear(200, 200).
  auto kaiming = lesson::build_model(lesson::NormKind::Layer, net, {.init = lesson::InitScheme::Kaiming}, gen);
  const Tensor& w = kaiming->at<nn::Linear>(3).weight;  // Linear at 0, 3, 6; LayerNorm skipped to the Tanh
  double sq = 0.0;
  for (int64_t i = 0; i < w.numel(); ++i) sq += double(w.data()[i]) * w.data()[i];
  const double std = std::sqrt(sq / double(w.numel())), expected = 5.0 / 3.0 / std::sqrt(200.0);
  CHECK(std::abs(std / expected - 1.0) < 5.0 * std::sqrt(2.0 / (4.0 * double(w.numel()))));
}

TEST_CASE("digits trains the resmlp archs and prints their summaries", "[lesson][arch]") {
  TempDir dir;
  for (const char* arch : {"resmlp-pre", "resmlp-post"}) {
    INFO(arch);
    ProcessResult o = run_digits(
        dir, {"--arch", arch, "--blocks", "2", "--width", "16", "--expansion", "2", "--dropout", "0.1", "--epochs", "2",
              "--lr", "0.1", "--quiet", "--seeds", "0", "--summary", dir.file(std::string(arch) + ".json")});
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    CHECK(o.out.rfind("LayerNorm ", 0) == 0);  // --norm defaults to layer
    const nlohmann::json summary = nlohmann::json::parse(minidl::testing::slurp(dir.file(std::string(arch) + ".json")));
    CHECK(summary["settings"]["arch"] == arch);
    CHECK(summary["settings"]["blocks"] == 2);
    CHECK(summary["runs"][0]["val_accuracy"].get<double>() > 0.5);  // it learns
  }
  ProcessResult s = run_digits(dir, {"--arch", "resmlp-pre", "--norm", "rms", "--blocks", "1", "--width", "16",
                                     "--expansion", "2", "--summary-model"});
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(s.out.find("resmlp-pre with RMSNorm\n") == 0);
  CHECK(s.out.find("│    └─norm (RMSNorm)") != std::string::npos);
  // 64*16+16 + (16 + 16*32+32 + 32*16+16) + 16 + 16*10+10 = 1040 + 1088 + 16 + 170
  CHECK(s.out.find("Total params: 2,314\n") != std::string::npos);
}

TEST_CASE("digits refuses option combinations that make no sense, with one line and exit code 2", "[lesson][arch]") {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"--blocks", "3"}, "--blocks needs --arch resmlp-pre or resmlp-post (--arch mlp has none)"},
      {{"--dropout", "0.1"}, "--dropout needs --arch resmlp-pre or resmlp-post (--arch mlp has none)"},
      {{"--arch", "mlp", "--expansion", "2"}, "--expansion needs --arch resmlp-pre or resmlp-post"},
      {{"--arch", "resmlp-pre", "--depth", "4"},
       "--depth is for --arch mlp; --arch resmlp-pre takes --blocks, --expansion and --width"},
      {{"--arch", "resmlp-post", "--groups", "4"}, "--groups is for --arch mlp"},
      {{"--arch", "cnn", "--depth", "4"}, "--depth is for --arch mlp and the resmlp archs; --arch cnn has fixed sizes"},
      {{"--arch", "cnn", "--width", "32"},
       "--width is for --arch mlp and the resmlp archs; --arch cnn has fixed sizes"},
      {{"--arch", "resmlp-pre", "--norm", "batch"}, "--arch resmlp-pre takes --norm layer, rms or dyt, got batch"},
      {{"--arch", "resmlp-post", "--norm", "layer,none"},
       "--arch resmlp-post takes --norm layer, rms or dyt, got none"},
      {{"--arch", "resmlp"}, "--arch: unknown architecture \"resmlp\": choose from mlp, resmlp-pre, resmlp-post, cnn"},
      {{"--arch", "resmlp-pre", "--blocks", "0"}, "--blocks must be at least 1, got 0"},
      {{"--arch", "resmlp-pre", "--dropout", "1"}, "--dropout must be in [0, 1), got 1"},
      {{"--arch", "resmlp-pre", "--dropout", "-0.5"}, "--dropout must be in [0, 1), got -0.5"},
      {{"--arch", "resmlp-pre", "--dropout", "half"}, "--dropout: \"half\" is not a number"},
      {{"--init", "he"},
       "--init: unknown scheme \"he\": choose from pytorch, xavier, kaiming (--init-from DIR starts "
       "from checkpoints)"},
      {{"--init", "xavier", "--init-from", "somewhere"},
       "--init xavier and --init-from both set the initial weights: give one"},
      {{"--arch", "cnn", "--init", "kaiming"},
       "--init kaiming re-draws Linear layers only: --arch cnn takes --init pytorch (its convolutions would keep "
       "PyTorch's draw)"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--epochs", "1", "--quiet", "--seeds", "0"});
    INFO(c.args[0] << " " << c.args[1]);
    ProcessResult o = run_digits(dir, args);
    CHECK(o.exit_code == 2);
    CHECK(o.out.empty());
    CHECK_THAT(o.err, Catch::StartsWith("digits: " + c.message));
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  }
}

TEST_CASE("digits --norm dyt trains the mlp, the resmlp and the CNN with DyT in place of a norm", "[lesson][arch]") {
  TempDir dir;
  const std::vector<std::vector<std::string>> archs{{"--arch", "mlp", "--depth", "4", "--width", "16"},
                                                    {"--arch", "resmlp-pre", "--blocks", "1", "--width", "16"},
                                                    {"--arch", "cnn"}};
  for (const auto& arch : archs) {
    INFO(arch[1]);
    std::vector<std::string> args = arch;
    args.insert(args.end(), {"--norm", "dyt", "--epochs", "1", "--quiet", "--seeds", "0", "--summary-model"});
    ProcessResult o = run_digits(dir, args);
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    CHECK(o.out.find("(DyT)") != std::string::npos);
  }
  // Depth 2, 5 epochs: the loss leaves ln 10 = 2.303 (2.22 here; DyT learns slower than no norm
  // at this depth: lab dyt_deep_net), so DyT's parameters take part in training.
  ProcessResult o =
      run_digits(dir, {"--norm", "dyt", "--depth", "2", "--quiet", "--seeds", "0", "--summary", dir.file("s.json")});
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(minidl::testing::slurp(dir.file("s.json")));
  CHECK(summary["runs"][0]["train_loss"].get<double>() < 2.27);
}

TEST_CASE("digits --init xavier trains the lesson's mlp and is recorded in the summary", "[lesson][arch]") {
  TempDir dir;
  ProcessResult o = run_digits(dir, {"--norm", "none", "--depth", "2", "--width", "16", "--epochs", "1", "--init",
                                     "xavier", "--quiet", "--seeds", "0", "--summary", dir.file("s.json")});
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(minidl::testing::slurp(dir.file("s.json")));
  CHECK(summary["settings"]["init"] == "xavier");
  CHECK(summary["settings"]["arch"] == "mlp");
}

TEST_CASE("digits with dropout gives the same curves run alone or side by side", "[lesson][arch]") {
  // Each run's dropout stream is its own (seeded from the run's seed), like its init stream.
  TempDir dir;
  auto curves = [&](const std::string& file, const std::string& jobs) {
    ProcessResult o = run_digits(
        dir, {"--arch",      "resmlp-pre", "--norm",    "layer,rms", "--blocks", "1",        "--width",     "16",
              "--expansion", "2",          "--dropout", "0.3",       "--epochs", "1",        "--seeds",     "0,1",
              "--jobs",      jobs,         "--threads", "1",         "--quiet",  "--curves", dir.file(file)});
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return minidl::testing::slurp(dir.file(file));
  };
  const std::string alone = curves("a.csv", "1");
  CHECK(curves("b.csv", "2") == alone);
  CHECK(alone.find("layer,1,1,1,") != std::string::npos);
}

}  // namespace test_digits_arch
#endif
