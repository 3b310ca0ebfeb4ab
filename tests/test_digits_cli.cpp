// The digits program as a user runs it: options, exit codes, output files, replays.
#ifdef MINIDL_DIGITS_EXE
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/digits_cli.hpp"
#include "support/digits_replay.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_digits_cli {

using minidl::testing::count_lines;
using minidl::testing::ProcessResult;
using minidl::testing::run_digits;
using minidl::testing::slurp;
using minidl::testing::TempDir;

namespace {

// A small, fast run: two blocks, one epoch.
const std::vector<std::string> kSmall{"--depth", "2", "--width", "16", "--epochs", "1", "--quiet", "--seeds", "0"};

std::vector<std::string> with(const std::vector<std::string>& args, const std::vector<std::string>& more) {
  return minidl::testing::with_options(args, more);
}

}  // namespace

TEST_CASE("digits --batch-order with the same file twice gives identical curves, another file others", "[lesson]") {
  TempDir dir;
  auto write_order = [&](const std::string& name, int64_t stride) {
    std::string order;
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (int64_t i = 0; i < 1437; ++i)
        order += std::to_string(epoch ? 1436 - i : (i * stride) % 1437) + (i < 1436 ? " " : "\n");
    }
    return dir.write(name, order);
  };
  const std::string order_a = write_order("a.txt", 7), order_b = write_order("b.txt", 11);
  auto run = [&](const std::string& order, const std::string& curves, const std::string& seed,
                 const std::string& threads) {
    ProcessResult o = run_digits(
        dir, {"--norm", "none,batch,layer", "--depth", "3", "--width", "32", "--epochs", "2", "--batch-order", order,
              "--curves", dir.file(curves), "--seeds", seed, "--threads", threads, "--quiet"});
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return slurp(dir.file(curves));
  };
  const std::string first = run(order_a, "a.csv", "0", "1");
  CHECK(count_lines(first) == 1 + 3 * 2 * 23);
  CHECK(first.rfind("run,seed,epoch,step,loss\nnone,0,1,1,", 0) == 0);
  CHECK(run(order_a, "b.csv", "0", "1") == first);
  CHECK(run(order_a, "c.csv", "0", "2") == first);  // the thread count changes nothing
  CHECK(run(order_a, "d.csv", "5", "1") != first);  // another init
  const std::string other_order = run(order_b, "e.csv", "0", "1");
  CHECK(other_order != first);
  CHECK(run(order_b, "f.csv", "0", "2") == other_order);
}

TEST_CASE("digits --batch-order trains on the file's batches: two orders, each as trained by hand", "[lesson]") {
  // The same start in two orders: each run's curve and weights are those of SGD by hand on
  // that order's batches (support/hand_trainer.hpp; the bounds are test_digits_trainer.cpp's),
  // and far from the other order's. A program that read the file and shuffled its own way,
  // or used one order for both, fails.
  minidl::testing::DigitsReplay replay;
  const int64_t n = replay.train_examples();
  const auto order_a = minidl::testing::strided_order(n, 2, 7, 100),
             order_b = minidl::testing::strided_order(n, 2, 11, 5);
  const minidl::testing::HandOptimizer sgd{.lr = [](int64_t) { return 0.05; }};
  const auto a = replay.run(order_a, {}), b = replay.run(order_b, {});
  const minidl::testing::HandRun hand_a = replay.by_hand(order_a, sgd), hand_b = replay.by_hand(order_b, sgd);
  REQUIRE(a.losses.size() == 6);
  REQUIRE(b.losses.size() == 6);
  double curves_apart = 0.0;
  for (size_t s = 0; s < 6; ++s) {
    INFO("step " << s + 1);
    CHECK(a.losses[s] == Approx(hand_a.losses[s]).epsilon(1e-5));
    CHECK(b.losses[s] == Approx(hand_b.losses[s]).epsilon(1e-5));
    curves_apart = std::max(curves_apart, std::abs(a.losses[s] - b.losses[s]));
  }
  CHECK(curves_apart > 1e-3);
  CHECK(minidl::testing::worst_excess(a.weights, hand_a.weights, 1e-6, 1e-5) <= 1.0);
  CHECK(minidl::testing::worst_excess(b.weights, hand_b.weights, 1e-6, 1e-5) <= 1.0);
  CHECK(minidl::testing::worst_excess(b.weights, hand_a.weights, 1e-6, 1e-5) > 100.0);
}

TEST_CASE("digits --jobs trains the runs concurrently with the results of running them one by one", "[lesson]") {
  TempDir dir;
  auto run = [&](const std::string& curves, const std::string& jobs) {
    ProcessResult o =
        run_digits(dir, with(kSmall, {"--norm", "none,batch,layer,rms", "--curves", dir.file(curves), "--jobs", jobs}));
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
  ProcessResult o = run_digits(dir, with(kSmall, {"--norm", "rms,group", "--groups", "4", "--summary",
                                                  dir.file("s.json"), "--save", dir.file("ckpt")}));
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

TEST_CASE("digits --init-from starts from a checkpoint: saved weights replay the same run", "[lesson]") {
  TempDir dir;
  REQUIRE(run_digits(dir, with(kSmall, {"--norm", "batch", "--save", dir.file("a")})).exit_code == 0);
  // Two runs from the same saved weights with the same seed train identically; a run from
  // random weights with that seed differs.
  auto curves = [&](const std::string& name, bool init) {
    auto args = with(kSmall, {"--norm", "batch", "--seeds", "3", "--curves", dir.file(name)});
    if (init) args = with(args, {"--init-from", dir.file("a")});
    ProcessResult o = run_digits(dir, args);
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return slurp(dir.file(name));
  };
  CHECK(curves("x.csv", true) == curves("y.csv", true));
  CHECK(curves("x.csv", true) != curves("z.csv", false));
}

TEST_CASE("digits shows progress lines unless --quiet", "[lesson]") {
  TempDir dir;
  ProcessResult o =
      run_digits(dir, {"--norm", "layer", "--depth", "2", "--width", "16", "--epochs", "2", "--seeds", "7"});
  REQUIRE(o.exit_code == 0);
  CHECK(count_lines(o.err) == 2);
  CHECK_THAT(o.err, Catch::StartsWith("[layer seed 7] epoch 1/2  mean loss ") && Catch::Contains("val accuracy") &&
                        Catch::Contains("[layer seed 7] epoch 2/2"));
}

TEST_CASE("digits: a diverging run stops with a message, the others go on, exit code 1", "[lesson]") {
  TempDir dir;
  ProcessResult o = run_digits(dir, {"--norm", "none,batch", "--depth", "2", "--width", "16", "--epochs", "1", "--lr",
                                     "1e38", "--quiet", "--seeds", "0", "--curves", dir.file("c.csv")});
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
      {{"--norm", "batch,weight"}, "unknown norm \"weight\""},
      {{"--norm", "batch,instance"}, "instance normalization needs images: use it with --arch cnn"},
      {{"--arch", "cnn", "--norm", "rms"}, "the CNN has no RMSNorm form"},
      {{"--arch", "cnn", "--norm", "group", "--groups", "3"}, "groups 3 does not divide 16"},
      {{"--arch", "rnn"}, "--arch: unknown architecture \"rnn\": choose from mlp, resmlp-pre, resmlp-post, cnn"},
      {{"--norm", "batch,batch"}, "--norm lists \"batch\" twice"},
      {{"--epochs", "0"}, "epochs must be at least 1, got 0"},
      {{"--batch-size", "-4"}, "--batch-size must be at least 1, got -4"},
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
      {{"--norm", "none", "--init-from", corrupt_dir}, "none.safetensors: "},
      {{"--norm", "layer", "--init-from", corrupt_dir}, "layer.safetensors: cannot open"},
      {{"--curves", dir.file("no/such/dir/c.csv")}, "does not exist"},
  };
  for (const auto& [args, message] : cases) {
    ProcessResult o = run_digits(dir, with(args, {"--quiet"}));
    INFO("digits " << args.front() << " ...: stderr " << o.err);
    CHECK(o.exit_code == 2);
    CHECK(count_lines(o.err) == 1);
    CHECK_THAT(o.err, Catch::StartsWith("digits: ") && Catch::Contains(message));
    CHECK(o.out.empty());
  }
}

TEST_CASE("digits --init-from refuses a checkpoint of another model with exit code 2", "[lesson]") {
  TempDir dir;
  REQUIRE(run_digits(dir, with(kSmall, {"--norm", "layer", "--save", dir.file("ckpt")})).exit_code == 0);
  ProcessResult o =
      run_digits(dir, with(kSmall, {"--norm", "layer", "--width", "32", "--init-from", dir.file("ckpt")}));
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.err, Catch::Contains("layer.safetensors does not fit deep_net(layer)") && Catch::Contains("0.weight"));
}

TEST_CASE("digits --help describes every option", "[lesson]") {
  TempDir dir;
  ProcessResult o = run_digits(dir, {"--help"});
  CHECK(o.exit_code == 0);
  for (const char* option :
       {"--norm",  "--epochs",    "--lr",          "--batch-size", "--depth",  "--width",      "--groups",
        "--seeds", "--threads",   "--jobs",        "--data",       "--curves", "--val-curves", "--summary",
        "--save",  "--init-from", "--batch-order", "--drop-last",  "--quiet",  "--help"})
    CHECK_THAT(o.out, Catch::Contains(option));
}
TEST_CASE("digits --seeds trains every norm once per seed, with the results of one seed at a time", "[lesson][seeds]") {
  TempDir dir;
  auto run = [&](const std::string& tag, const std::string& seeds, const std::string& jobs) {
    ProcessResult o = run_digits(dir, {"--norm", "none,layer", "--depth", "2", "--width", "16", "--epochs", "2",
                                       "--quiet", "--seeds", seeds, "--jobs", jobs, "--curves", dir.file(tag + ".csv"),
                                       "--val-curves", dir.file(tag + "_val.csv"), "--save", dir.file(tag)});
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    return o;
  };
  const ProcessResult all = run("all", "0-2", "2");
  CHECK_THAT(all.out, Catch::StartsWith("over seeds 0-2: mean [min, max]; right of the bar, seed 0 alone\n"));
  CHECK(count_lines(all.out) == 4);  // the two header lines and a row per norm
  const std::string curves = slurp(dir.file("all.csv")), validation = slurp(dir.file("all_val.csv"));
  CHECK(count_lines(curves) == 1 + 2 * 3 * 2 * 23);
  CHECK(count_lines(validation) == 1 + 2 * 3 * 2);
  CHECK_THAT(validation, Catch::StartsWith("run,seed,epoch,step,val_loss,val_accuracy\nnone,0,1,23,"));
  // Seed 1 alone trains as seed 1 among others: its rows are the same bits.
  run("one", "1", "1");
  auto rows_of = [](const std::string& csv, const std::string& prefix) {
    std::string rows;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);)
      if (line.starts_with(prefix)) rows += line + "\n";
    return rows;
  };
  for (const char* norm : {"none,1,", "layer,1,"}) {
    INFO(norm);
    CHECK(rows_of(slurp(dir.file("one.csv")), norm).size() > 100);
    CHECK(rows_of(slurp(dir.file("one.csv")), norm) == rows_of(curves, norm));
    CHECK(rows_of(slurp(dir.file("one_val.csv")), norm) == rows_of(validation, norm));
  }
  CHECK(rows_of(curves, "none,0,") != rows_of(curves, "none,1,"));
  CHECK(slurp(dir.file("one/layer.safetensors")) == slurp(dir.file("all/layer_seed1.safetensors")));
  CHECK_FALSE(std::filesystem::exists(dir.file("all/layer.safetensors")));
}

TEST_CASE("digits --drop-last trains BatchNorm at batch size 2, and at batch size 1 refuses it while the others train",
          "[lesson][seeds]") {
  TempDir dir;
  ProcessResult two = run_digits(
      dir, with(kSmall, {"--norm", "none,batch", "--batch-size", "2", "--drop-last", "--curves", dir.file("two.csv")}));
  INFO(two.err);
  CHECK(two.exit_code == 0);
  CHECK(count_lines(slurp(dir.file("two.csv"))) == 1 + 2 * 718);  // 1437 = 718 x 2 + 1 dropped

  ProcessResult one =
      run_digits(dir, with(kSmall, {"--norm", "none,batch,layer", "--batch-size", "1", "--drop-last", "--curves",
                                    dir.file("one.csv"), "--summary", dir.file("one.json")}));
  INFO(one.err);
  CHECK(one.exit_code == 1);
  CHECK(one.err ==
        "digits: run \"batch\" (BatchNorm1d, seed 0) refused: batch size 1 puts one example in every batch, and "
        "BatchNorm1d in training mode needs more than one value per channel; choose a batch size of at least 2 (with "
        "--drop-last where the last batch would hold one)\n");
  CHECK_THAT(one.out, Catch::Contains("no normalization  training loss") &&
                          Catch::Contains("BatchNorm1d       failed") &&
                          Catch::Contains("LayerNorm         training loss"));
  const std::string curves = slurp(dir.file("one.csv"));
  CHECK(count_lines(curves) == 1 + 2 * 1437);
  CHECK_THAT(curves, !Catch::Contains("\nbatch,"));
  auto summary = nlohmann::json::parse(slurp(dir.file("one.json")));
  CHECK(summary["runs"][1]["norm"] == "batch");
  CHECK_THAT(summary["runs"][1]["error"].get<std::string>(), Catch::Contains("refused"));
  CHECK(summary["runs"][2]["val_accuracy"].is_number());
  CHECK(summary["settings"]["drop_last"] == true);
}

TEST_CASE("digits: without --drop-last a last batch of one is refused for BatchNorm before anything trains",
          "[lesson][seeds]") {
  TempDir dir;
  ProcessResult o =
      run_digits(dir, with(kSmall, {"--norm", "layer,batch", "--batch-size", "2", "--curves", dir.file("c.csv")}));
  CHECK(o.exit_code == 1);
  CHECK(count_lines(o.err) == 1);
  CHECK_THAT(o.err, Catch::StartsWith("digits: run \"batch\" (BatchNorm1d, seed 0) refused: batch size 2 on the "
                                      "1437-example training split leaves a last batch of one example"));
  CHECK_THAT(o.out, Catch::Contains("LayerNorm         training loss"));
  CHECK(count_lines(slurp(dir.file("c.csv"))) == 1 + 719);
}

}  // namespace test_digits_cli
#endif  // MINIDL_DIGITS_EXE
