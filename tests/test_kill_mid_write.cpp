// Files survive a process killed while writing them: a helper saves a checkpoint and a
// curves file in a loop (tests/helpers/save_loop.cpp); it is SIGKILLed at random moments
// and restarted, and after each kill every file present must be whole: the old generation
// or the new one, never a mix or a part, and no temporary file may pass for a checkpoint.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/difference.hpp"
#include "support/digits_cli.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_kill_mid_write {

using namespace minidl;
using minidl::testing::TempDir;

namespace {

const std::string kSaveLoop = std::string(MINIDL_BINARY_DIR) + "/tests/minidl_save_loop";

// The generation of a whole checkpoint; fails the test when it is torn.
int64_t checkpoint_generation(const std::string& path) {
  nn::StateDict state;
  REQUIRE_NOTHROW(state = io::load_safetensors(path));
  REQUIRE(state.size() == 2);
  REQUIRE(state[1].name == "generation");
  const float generation = state[1].value.data()[0];
  REQUIRE(state[0].value.shape() == Shape{256, 256});
  const std::vector<float> values = state[0].value.to_vector();
  REQUIRE(std::all_of(values.begin(), values.end(), [&](float v) { return v == generation; }));
  return int64_t(generation);
}

// The generation of a whole curves file; fails the test when rows are missing or torn.
int64_t curves_generation(const std::string& path) {
  std::istringstream in(testing::slurp(path));
  std::string line;
  REQUIRE(std::getline(in, line));
  REQUIRE(line == "run,epoch,step,loss");
  int64_t generation = -1, rows = 0;
  while (std::getline(in, line)) {
    int64_t g = 0, k = 0, loss = 0;
    REQUIRE(std::sscanf(line.c_str(), "loop,%ld,%ld,%ld", &g, &k, &loss) == 3);
    if (generation < 0) generation = g;
    REQUIRE(g == generation);
    REQUIRE(k == rows);
    ++rows;
  }
  REQUIRE(rows == 100 + generation % 100);
  return generation;
}

}  // namespace

TEST_CASE("checkpoints and curves killed mid-write are the old file or the new one", "[kill]") {
  TempDir dir;
  std::mt19937 rng(20261130);  // seeded: the same kill moments on every run
  std::uniform_int_distribution<int> delay_us(0, 40'000);
  int64_t last_checkpoint = -1, last_curves = -1;
  int killed_while_running = 0;
  for (int kill = 0; kill < 20; ++kill) {
    INFO("kill " << kill);
    testing::ProcessResult result;
    const pid_t pid =
        testing::spawn_process({kSaveLoop, dir.path().string(), "1000000"}, dir.file("out.txt"), dir.file("err.txt"));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ::kill(pid, SIGKILL);
    testing::wait_process(pid, result);
    if (result.signal == SIGKILL) ++killed_while_running;
    REQUIRE(testing::slurp(dir.file("err.txt")) == "");

    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      const std::string name = entry.path().filename().string();
      if (name == "out.txt" || name == "err.txt") continue;
      INFO("file " << name);
      if (name == "model.safetensors") {
        const int64_t g = checkpoint_generation(entry.path().string());
        CHECK(g >= last_checkpoint);  // never an older file than one seen before
        last_checkpoint = g;
      } else if (name == "curves.csv") {
        const int64_t g = curves_generation(entry.path().string());
        CHECK(g >= last_curves);
        last_curves = g;
      } else {
        // A temporary left by the kill: hidden, and no name a reader would take for the file.
        CHECK(name.starts_with("."));
        CHECK(name.find(".tmp.") != std::string::npos);
        CHECK_FALSE(name.ends_with(".safetensors"));
        CHECK_FALSE(name.ends_with(".csv"));
      }
    }
  }
  CHECK(killed_while_running == 20);  // the loop never ends by itself: every kill hit it running
  // On a loaded machine every random kill may come before the first save: one last run is
  // killed only once a checkpoint exists, so the files checked above include saved ones.
  if (last_checkpoint < 0) {
    testing::ProcessResult result;
    const pid_t pid =
        testing::spawn_process({kSaveLoop, dir.path().string(), "1000000"}, dir.file("out.txt"), dir.file("err.txt"));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(dir.file("model.safetensors")) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(pid, SIGKILL);
    testing::wait_process(pid, result);
    REQUIRE(std::filesystem::exists(dir.file("model.safetensors")));
    last_checkpoint = checkpoint_generation(dir.file("model.safetensors"));
  }
  CHECK(last_checkpoint >= 0);  // it got to save something
}

TEST_CASE("digits killed at random moments leaves only whole checkpoints, curves and summaries", "[kill][cli]") {
  testing::DigitsScratch s;
  const std::vector<std::string> args{"--quiet",
                                      "--seeds",
                                      "0",
                                      "--epochs",
                                      "1",
                                      "--norm",
                                      "none,batch,layer",
                                      "--save",
                                      s.file("save"),
                                      "--curves",
                                      s.file("curves.csv"),
                                      "--summary",
                                      s.file("summary.json")};
  // A complete run first: with the same seed every complete file has exactly these bytes.
  std::vector<std::string> reference_args = args;
  for (std::string& a : reference_args)
    if (a.starts_with(s.file(""))) a = s.file("ref_" + a.substr(s.file("").size()));
  REQUIRE(s.run(reference_args).exit_code == 0);
  const std::string reference_curves = testing::slurp(s.file("ref_curves.csv"));

  std::mt19937 rng(7);  // seeded: the same kill moments on every run
  std::uniform_int_distribution<int> delay_ms(0, 1500);
  for (int kill = 0; kill < 20; ++kill) {
    const int delay = delay_ms(rng);
    std::vector<std::string> argv{testing::kDigitsBinary, "--data", s.data().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = testing::spawn_process(argv, s.file("out.txt"), s.file("err.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    ::kill(pid, SIGKILL);
    testing::ProcessResult result;
    testing::wait_process(pid, result);
    INFO("kill " << kill << " after " << delay << " ms: the process "
                 << (result.signal ? cat("was ended by signal ", result.signal) : cat("exited with ", result.exit_code))
                 << "; its stderr: \"" << testing::slurp(s.file("err.txt")) << "\"");
    CHECK((result.signal == SIGKILL || result.exit_code == 0));

    auto check_dir = [&](const std::filesystem::path& dir, auto&& check_file) {
      if (!std::filesystem::exists(dir)) return;
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        INFO("file " << entry.path().string());
        if (entry.is_directory() || name.starts_with("ref_") || name == "data" || name.ends_with(".txt")) continue;
        if (name.starts_with(".")) {  // a temporary the kill left: never taken for an output
          CHECK(name.find(".tmp.") != std::string::npos);
          CHECK_FALSE(name.ends_with(".safetensors"));
          continue;
        }
        check_file(entry.path(), name);
      }
    };
    check_dir(s.dir.path(), [&](const std::filesystem::path& path, const std::string& name) {
      if (name == "curves.csv") {
        const std::string curves = testing::slurp(path);
        if (curves != reference_curves)
          WARN("whole curves that are not the reference's bytes: " << testing::bytes_difference(curves,
                                                                                                reference_curves));
        CHECK(testing::csv_difference(curves, reference_curves, 1e-3) == "");
      } else if (name == "summary.json") CHECK(nlohmann::json::parse(testing::slurp(path))["runs"].size() == 3);
      else FAIL("unexpected file " << name);
    });
    check_dir(s.file("save"), [&](const std::filesystem::path& path, const std::string& name) {
      REQUIRE(name.ends_with(".safetensors"));
      // Whole: the reference's entries and shapes, every value within float32's reach of the
      // reference's. The same seed gives the same bytes (test_determinism.cpp holds that);
      // should a file here differ in its last bits, it is reported, not taken for a torn file.
      const std::string reference = s.file("ref_save") + "/" + name;
      const std::string bits = testing::checkpoint_difference(path.string(), reference);
      if (!bits.empty()) WARN("a whole checkpoint that is not the reference's bytes: " << bits);
      // The same bytes are whole by themselves: the files are loaded again only when they differ.
      const std::string not_whole = bits.empty() ? "" : testing::checkpoint_difference(path.string(), reference, 1e-3);
      CHECK(not_whole == "");
    });
  }
}

TEST_CASE("the kill tests' comparisons tell a torn or changed file from a whole one", "[kill]") {
  TempDir dir;
  const std::string expected = dir.file("expected.safetensors");
  io::save_safetensors(expected, {{"w", Tensor::full({4, 4}, 0.5f)}});
  auto saved_with = [&](const std::string& name, float first_value) {
    Tensor w = Tensor::full({4, 4}, 0.5f);
    w.data()[0] = first_value;
    io::save_safetensors(dir.file(name), {{"w", w}});
    return dir.file(name);
  };
  CHECK(testing::checkpoint_difference(expected, expected) == "");
  const std::string last_bits = saved_with("last_bits.safetensors", 0.5f + 1e-6f);
  CHECK_THAT(testing::checkpoint_difference(last_bits, expected), Catch::Contains("w: 1 of 16 values differ"));
  CHECK(testing::checkpoint_difference(last_bits, expected, 1e-3) == "");
  const std::string zeroed = saved_with("zeroed.safetensors", 0.0f);
  CHECK_THAT(testing::checkpoint_difference(zeroed, expected, 1e-3), Catch::Contains("at most by 0.5"));
  const std::string torn = dir.write("torn.safetensors", testing::slurp(expected).substr(0, 40));
  CHECK_THAT(testing::checkpoint_difference(torn, expected, 1e-3), Catch::Contains("truncated"));

  const std::string curves = "run,seed,epoch,step,loss\nnone,0,1,1,2.3111546\n";
  CHECK(testing::csv_difference(curves, curves, 1e-3) == "");
  CHECK(testing::csv_difference("run,seed,epoch,step,loss\nnone,0,1,1,2.3111547\n", curves, 1e-3) == "");
  CHECK_THAT(testing::csv_difference("run,seed,epoch,step,loss\nnone,0,1,1,2.4\n", curves, 1e-3),
             Catch::Contains("line 2 is \"none,0,1,1,2.4\""));
  CHECK_THAT(testing::csv_difference("run,seed,epoch,step,loss\n", curves, 1e-3), Catch::Contains("the file ends"));
  CHECK_THAT(testing::bytes_difference("ab\ncd\n", "ab\nce\n"), Catch::Contains("line 2: \"cd\" against \"ce\""));
}

}  // namespace test_kill_mid_write
