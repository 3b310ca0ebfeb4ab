// The digits' CNN (apps/common/models/cnn.hpp): its layers and PyTorch state_dict names,
// each norm's form, the options it refuses, and `digits --arch cnn` end to end (every norm
// trains, saves, reloads with --init-from, reports in --summary). PyTorch's strict load of its
// checkpoints and the way back: scripts/check_checkpoints_torch.py --arch cnn (a ctest).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "minidl/minidl.hpp"
#include "models/arch.hpp"
#include "models/cnn.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "training/digits_train.hpp"

namespace test_digits_cnn {

using namespace minidl;
using lesson::Arch;
using lesson::NormKind;

namespace {
const lesson::ModelOptions kCnn{.arch = Arch::CNN};

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& entry : m.state_dict()) names.push_back(entry.name);
  return names;
}
}  // namespace

TEST_CASE("the CNN has PyTorch's layer indices and shapes, with and without a norm", "[lesson][conv]") {
  Generator gen(0);
  auto plain = lesson::build_model(NormKind::None, {}, kCnn, gen);
  CHECK(plain->size() == 10);
  CHECK(names_of(*plain) == std::vector<std::string>{"1.weight", "1.bias", "3.weight", "3.bias", "5.weight", "5.bias",
                                                     "9.weight", "9.bias"});
  auto batch = lesson::build_model(NormKind::Batch, {}, kCnn, gen);
  CHECK(batch->size() == 13);
  CHECK((*batch)[2]->type_name() == "BatchNorm2d");
  CHECK((*batch)[12]->type_name() == "Linear");
  CHECK((*batch)[0]->repr() == "Unflatten(dim=1, unflattened_size=(1, 8, 8))");
  CHECK((*batch)[4]->repr() == "Conv2d(16, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))");
  int64_t parameters = 0;
  for (const Tensor& p : plain->parameters()) parameters += p.numel();
  CHECK(parameters == (16 * 9 + 16) + (32 * 16 * 9 + 32) + (32 * 32 * 9 + 32) + (32 * 10 + 10));
  NoGradGuard no_grad;
  CHECK((*batch)(Tensor::zeros({5, 64})).shape() == Shape{5, 10});
  for (NormKind norm : {NormKind::Layer, NormKind::Group, NormKind::Instance}) {
    auto model = lesson::build_model(norm, {}, kCnn, gen);
    auto& gn = dynamic_cast<nn::GroupNorm&>(*(*model)[5]);  // after the 32-channel convolution
    const int64_t groups = norm == NormKind::Layer ? 1 : norm == NormKind::Group ? 8 : 32;
    CHECK(gn.options().num_groups == groups);
    CHECK((*model)(Tensor::zeros({1, 64})).shape() == Shape{1, 10});
  }
  CHECK(lesson::display_name(NormKind::Batch, Arch::CNN) == "BatchNorm2d");
  CHECK(lesson::display_name(NormKind::Layer, Arch::CNN) == "GroupNorm(1, C)");
  CHECK(lesson::arch_name(Arch::CNN) == "cnn");
}

TEST_CASE("BatchNorm2d takes batches of one, where BatchNorm1d is refused", "[lesson][conv]") {
  // The options the CNN refuses (rms, groups not dividing 16, --init other than pytorch) are
  // the digits program's: test_digits_cli.cpp and test_digits_arch.cpp.
  Generator gen(0);
  lesson::TrainOptions options;
  options.norm = NormKind::Batch;
  options.batch_size = 1;
  CHECK(lesson::refusal(options, 1437).has_value());  // BatchNorm1d: one value per channel
  options.model.arch = Arch::CNN;
  CHECK_FALSE(lesson::refusal(options, 1437).has_value());  // BatchNorm2d: 8 x 8 of them
  auto model = lesson::build_model(NormKind::Batch, options.net, options.model, gen);
  CHECK(std::isfinite(cross_entropy((*model)(Tensor::ones({1, 64})), Tensor::zeros({1})).item()));
}

#ifdef MINIDL_DIGITS_EXE
TEST_CASE("digits --arch cnn trains every norm, saves, reloads with --init-from and reports", "[lesson][conv]") {
  testing::TempDir dir;
  const std::vector<std::string> base{MINIDL_DIGITS_EXE, "--arch",    "cnn", "--epochs", "1", "--seeds", "0",
                                      "--quiet",         "--threads", "1",   "--jobs",   "2"};
  auto run = [&](std::vector<std::string> more) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), more.begin(), more.end());
    return testing::run_process(argv, dir.path());
  };
  const auto first = run({"--norm", "none,batch,layer,group,instance", "--save", dir.file("saved"), "--summary",
                          dir.file("s.json"), "--curves", dir.file("c.csv")});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  for (const char* name : {"no normalization", "BatchNorm2d", "GroupNorm(1, C)", "GroupNorm ", "GroupNorm(C, C)"})
    CHECK_THAT(first.out, Catch::Contains(name));
  const auto summary = nlohmann::json::parse(testing::slurp(dir.file("s.json")));
  CHECK(summary["settings"]["arch"] == "cnn");
  CHECK(summary["runs"].size() == 5);
  for (const auto& r : summary["runs"]) CHECK(r["steps"] == 23);
  // Restarting from the saved weights (strict names and shapes) trains again.
  std::filesystem::rename(dir.file("saved"), dir.file("init"));
  const auto again = run({"--norm", "batch,instance", "--init-from", dir.file("init")});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  // An MLP checkpoint does not fit the CNN: the message names the network and the entry.
  const auto mlp = testing::run_process(
      {MINIDL_DIGITS_EXE, "--epochs", "1", "--seeds", "0", "--quiet", "--norm", "none", "--save", dir.file("mlp")},
      dir.path());
  REQUIRE(mlp.exit_code == 0);
  const auto wrong = run({"--norm", "none", "--init-from", dir.file("mlp")});
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.err, Catch::Contains("does not fit cnn(none)"));
  // The resmlp archs' options are refused with --arch cnn.
  const auto blocks = run({"--norm", "batch", "--blocks", "2"});
  CHECK(blocks.exit_code == 2);
  CHECK_THAT(blocks.err, Catch::Contains("--blocks needs --arch resmlp-pre or resmlp-post (--arch cnn has none)"));
}
#endif

}  // namespace test_digits_cnn
