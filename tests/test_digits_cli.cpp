// The digits program as a user runs it: options, exit codes, output files, replays.
#ifdef MINIDL_DIGITS_EXE
#include <filesystem>
#include <nlohmann/json.hpp>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using minidl::testing::ProcessResult;
using minidl::testing::slurp;
using minidl::testing::TempDir;

namespace {

ProcessResult digits(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{MINIDL_DIGITS_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = minidl::testing::run_process(argv, dir.path());
  REQUIRE(result.signal == 0);
  return result;
}

size_t count_lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

// A small, fast run: two blocks, one epoch.
const std::vector<std::string> kSmall{"--depth", "2", "--width", "16", "--epochs", "1", "--quiet"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("digits --batch-order with the same file twice gives identical curves", "[lesson]") {
  TempDir dir;
  std::string order;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int i = 0; i < 1437; ++i) order += std::to_string(epoch ? 1436 - i : (i * 7) % 1437) + (i < 1436 ? " " : "\n");
  }
  const std::string order_file = dir.write("order.txt", order);
  auto run = [&](const std::string& curves, const std::string& seed, const std::string& threads) {
    ProcessResult o = digits(dir, {"--norm", "none,batch,layer", "--depth", "3", "--width", "32", "--epochs", "2",
                             "--batch-order", order_file, "--curves", dir.file(curves), "--seed", seed, "--threads",
                             threads, "--quiet"});
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return slurp(dir.file(curves));
  };
  const std::string first = run("a.csv", "0", "1");
  CHECK(count_lines(first) == 1 + 3 * 2 * 23);
  CHECK(first.rfind("run,epoch,step,loss\nnone,1,1,", 0) == 0);
  CHECK(run("b.csv", "0", "1") == first);
  CHECK(run("c.csv", "0", "2") == first);  // the thread count changes nothing
  CHECK(run("d.csv", "5", "1") != first);  // another init
}

TEST_CASE("digits --jobs trains the runs concurrently with the results of running them one by one", "[lesson]") {
  TempDir dir;
  auto run = [&](const std::string& curves, const std::string& jobs) {
    ProcessResult o = digits(dir, with(kSmall, {"--norm", "none,batch,layer,rms", "--curves",
                                          dir.file(curves), "--jobs", jobs}));
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return o.out + slurp(dir.file(curves));
  };
  const std::string one_by_one = run("a.csv", "1");
  CHECK(count_lines(one_by_one) == 4 + 1 + 4 * 23);
  CHECK(run("b.csv", "3") == one_by_one);  // shuffling and init are each run's own
  CHECK(run("c.csv", "8") == one_by_one);  // more jobs than runs
}

TEST_CASE("digits prints the lesson's table and writes the summary and checkpoints", "[lesson]") {
  TempDir dir;
  ProcessResult o = digits(dir, with(kSmall, {"--norm", "rms,group", "--groups", "4", "--summary", dir.file("s.json"),
                                        "--save", dir.file("ckpt")}));
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  REQUIRE(count_lines(o.out) == 2);
  CHECK_THAT(o.out, Catch::StartsWith("RMSNorm           training loss ") && Catch::Contains("   val accuracy ") &&
                        Catch::Contains("\nGroupNorm         training loss "));
  CHECK(o.err.empty());  // --quiet
  auto summary = nlohmann::json::parse(slurp(dir.file("s.json")));
  REQUIRE(summary["runs"].size() == 2);
  CHECK(summary["runs"][0]["norm"] == "rms");
  CHECK(summary["runs"][1]["name"] == "GroupNorm");
  for (const char* key : {"train_loss", "val_loss", "val_accuracy", "seconds"})
    CHECK(summary["runs"][1][key].is_number());
  CHECK(summary["settings"]["groups"] == 4);
  auto state = minidl::io::load_safetensors(dir.file("ckpt/group.safetensors"));
  CHECK(state.front().name == "0.weight");
  CHECK(state[2].name == "1.weight");  // GroupNorm's weight
  CHECK(std::filesystem::exists(dir.file("ckpt/rms.safetensors")));
}

TEST_CASE("digits --init starts from a checkpoint: saved weights replay the same run", "[lesson]") {
  TempDir dir;
  REQUIRE(digits(dir, with(kSmall, {"--norm", "batch", "--save", dir.file("a")})).exit_code == 0);
  // Two runs from the same saved weights with the same seed train identically; a run from
  // random weights with that seed differs.
  auto curves = [&](const std::string& name, bool init) {
    auto args = with(kSmall, {"--norm", "batch", "--seed", "3", "--curves", dir.file(name)});
    if (init) args = with(args, {"--init", dir.file("a")});
    ProcessResult o = digits(dir, args);
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return slurp(dir.file(name));
  };
  CHECK(curves("x.csv", true) == curves("y.csv", true));
  CHECK(curves("x.csv", true) != curves("z.csv", false));
}

TEST_CASE("digits shows progress lines unless --quiet", "[lesson]") {
  TempDir dir;
  ProcessResult o = digits(dir, {"--norm", "layer", "--depth", "2", "--width", "16", "--epochs", "2"});
  REQUIRE(o.exit_code == 0);
  CHECK(count_lines(o.err) == 2);
  CHECK_THAT(o.err, Catch::StartsWith("[layer] epoch 1/2  mean loss ") && Catch::Contains("val accuracy") &&
                        Catch::Contains("[layer] epoch 2/2"));
}

TEST_CASE("digits: a diverging run stops with a message, the others go on, exit code 1", "[lesson]") {
  TempDir dir;
  ProcessResult o = digits(dir, {"--norm", "none,batch", "--depth", "2", "--width", "16", "--epochs", "1", "--lr", "1e38",
                           "--quiet", "--curves", dir.file("c.csv")});
  CHECK(o.exit_code == 1);
  CHECK_THAT(o.err, Catch::Contains("run \"none\"") && Catch::Contains("at epoch 1, step") &&
                        Catch::Contains("lower learning rate"));
  CHECK(count_lines(o.out) == 2);  // both runs report
  CHECK_THAT(o.out, Catch::Contains("no normalization  diverged"));
  CHECK(std::filesystem::exists(dir.file("c.csv")));
}

TEST_CASE("digits: bad options and files get one clear line and exit code 2", "[lesson]") {
  TempDir dir;
  const std::string bad_order = dir.write("order.txt", "0 1 2\n");
  const std::string corrupt_dir = dir.file("init");
  std::filesystem::create_directories(corrupt_dir);
  dir.write("init/none.safetensors", "not a checkpoint at all");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--norm", "batch,instance"}, "unknown norm \"instance\""},
      {{"--norm", "batch,batch"}, "--norm lists \"batch\" twice"},
      {{"--epochs", "0"}, "epochs must be at least 1, got 0"},
      {{"--batch-size", "-4"}, "batch size must be at least 1, got -4"},
      {{"--depth", "0"}, "depth must be at least 1, got 0"},
      {{"--width", "0"}, "width must be at least 1, got 0"},
      {{"--lr", "0"}, "lr must be a positive number"},
      {{"--threads", "0"}, "--threads must be at least 1"},
      {{"--jobs", "0"}, "--jobs must be at least 1"},
      {{"--norm", "group", "--width", "60"}, "groups 8 does not divide width 60"},
      {{"--epochs", "abc"}, "abc"},
      {{"--frobnicate"}, "frobnicate"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--data", dir.file("nowhere")}, "nowhere/digits.csv: cannot open"},
      {{"--batch-order", bad_order}, "order.txt, line 1: expected 1437 indices"},
      {{"--batch-order", dir.file("missing.txt")}, "missing.txt: cannot open"},
      {{"--norm", "none", "--init", corrupt_dir}, "none.safetensors: "},
      {{"--norm", "layer", "--init", corrupt_dir}, "layer.safetensors: cannot open"},
      {{"--curves", dir.file("no/such/dir/c.csv")}, "does not exist"},
  };
  for (const auto& [args, message] : cases) {
    ProcessResult o = digits(dir, with(args, {"--quiet"}));
    INFO("digits " << args.front() << " ...: stderr " << o.err);
    CHECK(o.exit_code == 2);
    CHECK(count_lines(o.err) == 1);
    CHECK_THAT(o.err, Catch::StartsWith("digits: ") && Catch::Contains(message));
    CHECK(o.out.empty());
  }
}

TEST_CASE("digits --init refuses a checkpoint of another model with exit code 2", "[lesson]") {
  TempDir dir;
  REQUIRE(digits(dir, with(kSmall, {"--norm", "layer", "--save", dir.file("ckpt")})).exit_code == 0);
  ProcessResult o = digits(dir, with(kSmall, {"--norm", "layer", "--width", "32", "--init", dir.file("ckpt")}));
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.err, Catch::Contains("layer.safetensors does not fit deep_net(layer)") && Catch::Contains("0.weight"));
}

TEST_CASE("digits --help describes every option", "[lesson]") {
  TempDir dir;
  ProcessResult o = digits(dir, {"--help"});
  CHECK(o.exit_code == 0);
  for (const char* option : {"--norm", "--epochs", "--lr", "--batch-size", "--depth", "--width", "--groups", "--seed",
                             "--threads", "--jobs", "--data", "--curves", "--summary", "--save", "--init", "--batch-order",
                             "--quiet", "--help"})
    CHECK_THAT(o.out, Catch::Contains(option));
}
#endif  // MINIDL_DIGITS_EXE
