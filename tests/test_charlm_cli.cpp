// The charlm program as a user runs it: bad input files and options (exit 2, one line),
// checkpoints written and read back, batch orders, curves, summary and samples.
#ifdef MINIDL_CHARLM_EXE
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "minidl/io/safetensors.hpp"
#include "support/charlm_cli.hpp"

namespace test_charlm_cli {

using minidl::testing::ProcessResult;
using minidl::testing::run_charlm;
using minidl::testing::slurp;
using minidl::testing::TempDir;

namespace {

const std::vector<std::string>& kSmall = minidl::testing::kSmallCharlm;
std::string word_list() { return minidl::testing::charlm_word_list(); }

// Runs charlm on a word file holding `text` and expects exit 2 with `message` in its one line.
void check_refused(const std::string& text, const std::string& message, std::vector<std::string> more = {}) {
  TempDir dir;
  std::vector<std::string> args{"--data", dir.write("words.txt", text), "--steps", "1"};
  args.insert(args.end(), more.begin(), more.end());
  const ProcessResult r = run_charlm(dir, args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("charlm refuses bad word files: one line naming file, line and fix, exit 2", "[charlm]") {
  check_refused("", "words.txt: the file is empty");
  check_refused("abc\nabCd\n", "words.txt, line 2, column 3: the character \"C\" is outside the vocabulary a-z");
  check_refused("abc\nnaïve\n", "words.txt, line 2, column 3: the character \"ï\" is outside the vocabulary a-z");
  check_refused("abc\nab\xff\n", "words.txt, line 2, column 3: invalid UTF-8 (byte 0xff)");
  check_refused("abc\nabcdefgh\n",
                "words.txt, line 2: the word has 8 letters, more than the 5 --block-size 6 allows: pass --block-size 9",
                {"--block-size", "6"});
  check_refused("abc\n\nabd\n", "words.txt, line 2: a blank line");
  TempDir dir;
  const ProcessResult r = run_charlm(dir, {"--data", dir.path().string(), "--steps", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "charlm: " + dir.path().string() + ": is a directory, not a file\n");
}

TEST_CASE("charlm refuses a word list that leaves no validation word with one line and exit 2, and 10 words train",
          "[charlm]") {
  // Every 10th word validates: 9 words leave none (the validation loss would be 0 / 0).
  TempDir dir;
  auto run_on = [&](const std::string& stem, int count) {
    std::string text;
    for (int i = 0; i < count; ++i) text += std::string{char('a' + i), 'b', '\n'};
    const std::string words = dir.write(stem + ".txt", text);
    std::vector<std::string> args = kSmall;  // the case: batches of one word
    *(std::find(args.begin(), args.end(), "--batch-size") + 1) = "1";
    args.insert(args.end(), {"--steps", "1", "--data", words, "--summary", dir.file(stem + ".json")});
    return std::pair{words, run_charlm(dir, args, /*small=*/false)};
  };
  for (int count : {3, 9}) {
    const std::string stem = "words" + std::to_string(count);
    const auto [words, r] = run_on(stem, count);
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          minidl::cat("charlm: ", words, " has ", count,
                      " words, too few to leave any for validation (every 10th word): give 10 or more, or the split "
                      "as ",
                      stem, "_train_indices.txt and ", stem, "_val_indices.txt beside it\n"));
  }
  const auto [words, r] = run_on("words10", 10);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(slurp(dir.file("words10.json")));
  CHECK(std::isfinite(summary["runs"][0]["val_loss"].get<double>()));
}

TEST_CASE("charlm refuses bad options: one line naming the option, exit 2", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", word_list());
  auto refused = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.end(), {"--data", words});
    const ProcessResult r = run_charlm(dir, args, /*small=*/false);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "charlm: " + message + "\n");
  };
  refused({"--norm", "layer,group"},
          "--norm: unknown norm \"group\": choose from layer, rms, batch, batch-masked, none, dyt");
  refused({"--norm-position", "middle"}, "--norm-position: unknown position \"middle\": choose from pre, post");
  refused({"--norm", "rms,rms"}, "--norm lists \"rms\" twice");
  refused({"--init", "normal"}, "--init: unknown init \"normal\": choose makemore or xavier");
  refused({"--heads", "3"}, "--heads 3 does not divide --width 64: each head takes width / heads channels");
  refused({"--steps", "1e3"}, "--steps: \"1e3\" is not a whole number (expected a decimal integer, at least 0)");
  refused({"--temperature", "0"}, "--temperature must be a positive number, got 0");
  refused({"--top-k", "28"}, "--top-k must be at most 27, got 28");
  refused({"--schedule", "step"}, "--schedule: unknown schedule \"step\": choose constant or cosine");
  refused({"--steps", "5", "--warmup", "5"}, "--warmup 5 must be shorter than the run's 5 steps");
  refused({"--batch-size", "200"}, "--batch-size 200 is more than the 108 training words: every batch is a whole one");
  refused({"--steps", "1", "--curves", words}, "--curves " + words + " is the input " + words +
                                                   " (--data): writing it would destroy it; choose another file");
}

TEST_CASE("charlm --save then --init-from --steps 0: the same model, the same val loss, and samples", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", word_list());
  const ProcessResult trained =
      run_charlm(dir, {"--data", words, "--steps", "6", "--norm", "batch-masked,layer", "--norm-position", "pre,post",
                       "--save", dir.file("ckpt"), "--summary", dir.file("a.json")});
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  const auto state = minidl::io::load_safetensors(dir.file("ckpt/batch-masked-post.safetensors"));
  CHECK(state.front().name == "transformer.wte.weight");
  CHECK(std::filesystem::exists(dir.file("ckpt/layer-pre.safetensors")));
  const ProcessResult loaded =
      run_charlm(dir, {"--data", words, "--steps", "0", "--norm", "batch-masked,layer", "--norm-position", "pre,post",
                       "--init-from", dir.file("ckpt"), "--summary", dir.file("b.json"), "--sample", "3"});
  INFO(loaded.err);
  REQUIRE(loaded.exit_code == 0);
  const auto a = nlohmann::json::parse(slurp(dir.file("a.json"))), b = nlohmann::json::parse(slurp(dir.file("b.json")));
  REQUIRE(a["runs"].size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(a["runs"][i]["norm"] == b["runs"][i]["norm"]);
    CHECK(a["runs"][i]["val_loss"] == b["runs"][i]["val_loss"]);
  }
  CHECK(loaded.out.find("samples of layer-post seed 0:\n") != std::string::npos);
  const ProcessResult misfit =
      run_charlm(dir, {"--data", words, "--steps", "0", "--norm", "rms", "--init-from", dir.file("ckpt")});
  CHECK(misfit.exit_code == 2);
  CHECK(misfit.err.find("rms-pre.safetensors") != std::string::npos);
}

TEST_CASE("charlm --batch-order: the same file the same curves, another order others", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", word_list());
  auto order_file = [&](const std::string& name, int stride) {
    std::string text;
    for (int i = 0; i < 108; ++i) text += std::to_string((i * stride) % 108) + (i < 107 ? " " : "\n");
    return dir.write(name, text);
  };
  auto curves = [&](const std::string& order, const std::string& out) {
    const ProcessResult r = run_charlm(dir, {"--data", words, "--steps", "5", "--batch-order", order, "--curves",
                                             dir.file(out), "--val-curves", dir.file("val_" + out)});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return slurp(dir.file(out));
  };
  const std::string a = curves(order_file("a.txt", 1), "a.csv");
  CHECK(a.rfind("run,seed,step,loss\nlayer-pre,0,1,", 0) == 0);
  CHECK(std::count(a.begin(), a.end(), '\n') == 6);
  CHECK(curves(order_file("a2.txt", 1), "b.csv") == a);
  CHECK(curves(order_file("c.txt", 5), "c.csv") != a);
  CHECK(slurp(dir.file("val_a.csv")).rfind("run,seed,step,val_loss\nlayer-pre,0,5,", 0) == 0);
  const ProcessResult short_file =
      run_charlm(dir, {"--data", words, "--steps", "30", "--batch-order", order_file("d.txt", 1)});
  CHECK(short_file.exit_code == 2);
  CHECK(short_file.err.find("expected 3 lines (one per epoch), got 1") != std::string::npos);
}

TEST_CASE("charlm: a full standard output is reported, exit 1, and the files are still written", "[charlm]") {
  TempDir dir;
  std::vector<std::string> argv{MINIDL_CHARLM_EXE};
  argv.insert(argv.end(), kSmall.begin(), kSmall.end());
  for (const std::string& arg : {std::string("--data"), dir.write("words.txt", word_list()), std::string("--steps"),
                                 std::string("2"), std::string("--summary"), dir.file("s.json")})
    argv.push_back(arg);
  ProcessResult r;
  minidl::testing::wait_process(minidl::testing::spawn_process(argv, "/dev/full", dir.file("err.txt")), r);
  r.err = slurp(dir.file("err.txt"));
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "charlm: cannot write the results to standard output (closed or full); every output file was still "
        "written\n");
  CHECK(std::filesystem::exists(dir.file("s.json")));
}

TEST_CASE("charlm: SIGINT stops at the next step, writes what ran and exits 130", "[charlm]") {
  TempDir dir;
  std::vector<std::string> argv{MINIDL_CHARLM_EXE};
  argv.insert(argv.end(), kSmall.begin(), kSmall.end());
  const std::vector<std::string> more{"--data",    dir.write("words.txt", word_list()),
                                      "--steps",   "10000000",
                                      "--curves",  dir.file("c.csv"),
                                      "--summary", dir.file("s.json"),
                                      "--save",    dir.file("ck")};
  argv.insert(argv.end(), more.begin(), more.end());
  const pid_t pid = minidl::testing::spawn_process(argv, dir.file("out.txt"), dir.file("err.txt"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // well into training
  ::kill(pid, SIGINT);
  ProcessResult r;
  minidl::testing::wait_process(pid, r);
  r.err = slurp(dir.file("err.txt"));
  INFO(r.err);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("charlm: interrupted by SIGINT") != std::string::npos);
  const auto summary = nlohmann::json::parse(slurp(dir.file("s.json")));
  CHECK(summary["interrupted"] == "SIGINT");
  CHECK(summary["runs"][0]["interrupted"] == true);
  CHECK(summary["runs"][0]["steps"].get<int>() > 0);
  CHECK(slurp(dir.file("c.csv")).rfind("run,seed,step,loss\nlayer-pre,0,1,", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("ck/layer-pre.safetensors")));  // an unfinished run is no model
}

}  // namespace test_charlm_cli
#endif
