// The digits program attacked as a hostile or careless user would: special files, outputs
// that collide with inputs, closed pipes, signals, stale temporaries, overflowing sizes,
// address-space limits, odd paths and modes. Each case once broke a promise of
// docs/errors-and-guarantees.md.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "minidl/io/atomic_file.hpp"
#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/digits_cli.hpp"

namespace test_hardening {

using namespace minidl;
using minidl::testing::count_lines;
using minidl::testing::DigitsScratch;
using minidl::testing::ProcessResult;
using minidl::testing::slurp;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kQuick{"--quiet", "--seeds", "0", "--depth", "2", "--width", "16", "--epochs", "1"};

std::vector<std::string> quick(const std::vector<std::string>& more) { return testing::with_options(kQuick, more); }

// Runs digits with its stdout opened on out_path (a device, or /dev/fd/N of a pipe).
ProcessResult run_with_stdout(const DigitsScratch& s, std::vector<std::string> args, const std::string& out_path) {
  args.insert(args.begin(), {testing::kDigitsBinary, "--data", s.data().string()});
  ProcessResult result;
  testing::wait_process(testing::spawn_process(args, out_path, s.file("stderr.txt")), result);
  result.err = slurp(s.file("stderr.txt"));
  return result;
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("digits: a run whose weights blow up on its last step is a divergence, never a saved checkpoint",
          "[cli][hardening]") {
  DigitsScratch s;
  ProcessResult r = s.run({"--quiet", "--seeds", "0", "--norm", "none", "--epochs", "1", "--batch-size", "1437", "--lr",
                           "1e39", "--save", s.file("ck"), "--summary", s.file("s.json")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::StartsWith("no normalization  diverged"));
  CHECK_THAT(r.err, Catch::StartsWith("digits: run \"none\" (no normalization, seed 0): ") &&
                        (Catch::Contains("NaN or infinity") || Catch::Contains("final evaluation")));
  CHECK_FALSE(fs::exists(s.file("ck/none.safetensors")));
  CHECK(nlohmann::json::parse(slurp(s.file("s.json")))["runs"][0]["error"].is_string());
}

TEST_CASE("digits writes into devices and FIFOs in place and follows symlinks to the file they name",
          "[cli][hardening]") {
  DigitsScratch s;
  fs::create_symlink("/dev/null", s.file("null_link"));
  REQUIRE(::mkfifo(s.file("fifo").c_str(), 0644) == 0);
  std::string from_fifo;
  std::thread reader([&] { from_fifo = slurp(s.file("fifo")); });  // opening blocks until digits writes
  s.dir.write("target.csv", "old\n");
  fs::create_symlink(s.file("target.csv"), s.file("curves_link.csv"));
  ProcessResult r = s.run(quick({"--norm", "none", "--curves", s.file("curves_link.csv"), "--val-curves",
                                 s.file("null_link"), "--summary", s.file("fifo")}));
  reader.join();
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(s.file("null_link")));
  CHECK(fs::is_character_file("/dev/null"));
  CHECK(fs::is_fifo(s.file("fifo")));
  CHECK_THAT(from_fifo, Catch::StartsWith("{\n  \"settings\""));
  CHECK(fs::is_symlink(s.file("curves_link.csv")));  // the link stays, its target is replaced
  CHECK_THAT(slurp(s.file("target.csv")), Catch::StartsWith("run,seed,epoch,step,loss\n"));
}

TEST_CASE("digits refuses outputs that are inputs or each other, before training", "[cli][hardening]") {
  DigitsScratch s;
  const std::string csv_before = slurp(s.data() / "digits.csv");
  fs::create_symlink(s.data() / "digits.csv", s.file("alias.csv"));
  fs::create_hard_link(s.data() / "digits_train_indices.txt", s.file("hard.txt"));
  s.dir.write("order.txt", "0\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--curves", (s.data() / "digits.csv").string()},
       "is the input " + (s.data() / "digits.csv").string() + " (--data)"},
      {{"--curves", s.file("alias.csv")}, "(--data): writing it would destroy it"},
      {{"--summary", s.file("hard.txt")}, "digits_train_indices.txt (--data)"},
      {{"--curves", s.file("x.csv"), "--summary", s.file("x.csv")},
       "--summary " + s.file("x.csv") + " is also the output of --curves"},
      {{"--curves", s.file("x.csv"), "--val-curves", s.file("./x.csv")}, "is also the output of --curves"},
      {{"--batch-order", s.file("order.txt"), "--curves", s.file("order.txt")}, "(--batch-order)"},
      {{"--curves", s.file("")}, "is a directory, not a file"},
      {{"--curves", "/proc/minidl-test.csv"}, "--curves /proc/minidl-test.csv: cannot create a file in /proc"},
      {{"--save", "/proc/minidl-test"}, "--save /proc/minidl-test: cannot create the directory"},
      {{"--curves", s.file(std::string(256, 'c'))},
       "the file name has 256 bytes, more than the 255 its filesystem allows"},
  };
  for (const auto& [args, message] : cases) {
    ProcessResult r = s.run(quick(args));
    INFO(args.front() << " " << args.at(1) << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("digits: ") && Catch::Contains(message));
  }
  CHECK(slurp(s.data() / "digits.csv") == csv_before);
  CHECK_FALSE(fs::exists(s.file("x.csv")));
}

TEST_CASE("digits: a file name of 250 bytes is written whole (its temporary name is shortened to fit)",
          "[cli][hardening]") {
  DigitsScratch s;
  const std::string name = s.file(std::string(246, 'n') + ".csv");
  ProcessResult r = s.run(quick({"--norm", "none", "--curves", name}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(slurp(name), Catch::StartsWith("run,seed,epoch,step,loss\n"));
}

TEST_CASE("digits: a closed stdout or a full one costs no file, and exit 1 names stdout", "[cli][hardening]") {
  DigitsScratch s;
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  ::close(pipe_ends[0]);  // nobody will read: the first write to stdout gets EPIPE (SIGPIPE)
  ProcessResult closed = run_with_stdout(s,
                                         quick({"--norm", "none,batch", "--save", s.file("ck"), "--curves",
                                                s.file("c.csv"), "--summary", s.file("s.json")}),
                                         "/dev/fd/" + std::to_string(pipe_ends[1]));
  ::close(pipe_ends[1]);
  INFO(closed.err);
  CHECK(closed.signal == 0);
  CHECK(closed.exit_code == 1);
  CHECK_THAT(closed.err, Catch::Contains("digits: cannot write the results to standard output"));
  for (const char* file : {"ck/none.safetensors", "ck/batch.safetensors", "c.csv", "s.json"}) {
    INFO(file);
    CHECK(fs::exists(s.file(file)));
  }
  ProcessResult full = run_with_stdout(s, quick({"--norm", "none", "--curves", s.file("d.csv")}), "/dev/full");
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.err, Catch::Contains("standard output"));
  CHECK(fs::exists(s.file("d.csv")));
}

TEST_CASE("digits: SIGINT and SIGTERM stop at the next step, write what ran and exit 130 or 143", "[cli][hardening]") {
  for (const auto& [signal, code, name] : {std::tuple{SIGINT, 130, "SIGINT"}, std::tuple{SIGTERM, 143, "SIGTERM"}}) {
    DYNAMIC_SECTION(name) {
      DigitsScratch s;
      std::vector<std::string> args{testing::kDigitsBinary,
                                    "--data",
                                    s.data().string(),
                                    "--quiet",
                                    "--seeds",
                                    "0",
                                    "--norm",
                                    "layer",
                                    "--epochs",
                                    "100000",
                                    "--curves",
                                    s.file("c.csv"),
                                    "--summary",
                                    s.file("s.json"),
                                    "--save",
                                    s.file("ck")};
      const pid_t pid = testing::spawn_process(args, s.file("out.txt"), s.file("err.txt"));
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // well into training
      ::kill(pid, signal);
      ProcessResult r;
      testing::wait_process(pid, r);
      r.err = slurp(s.file("err.txt"));
      INFO(r.err);
      CHECK(r.signal == 0);
      CHECK(r.exit_code == code);
      CHECK_THAT(r.err, Catch::Contains(std::string("interrupted by ") + name));
      const auto summary = nlohmann::json::parse(slurp(s.file("s.json")));
      CHECK(summary["interrupted"] == name);
      CHECK(summary["runs"][0]["interrupted"] == true);
      CHECK(summary["runs"][0]["steps"].get<int>() > 10);
      CHECK(count_lines(slurp(s.file("c.csv"))) > 10);
      CHECK_FALSE(fs::exists(s.file("ck/layer.safetensors")));  // an unfinished run is not a model
      for (const auto& entry : fs::directory_iterator(s.dir.path()))
        CHECK_FALSE(entry.path().filename().string().find(".tmp.") != std::string::npos);
    }
  }
}

TEST_CASE("write_file_atomically removes stale temporaries of its target, and only those", "[io][hardening]") {
  testing::TempDir dir;
  const std::string stale = dir.write(".c.csv.tmp.AbC123", "left by a SIGKILL");
  const std::string other = dir.write(".d.csv.tmp.AbC123", "another target's");
  const std::string fresh = dir.write(".c.csv.tmp.Zz9999", "a writer still running");
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(stale, hour_ago);
  fs::last_write_time(other, hour_ago);
  fs::last_write_time(fresh, fs::file_time_type::clock::now() + std::chrono::hours(1));
  io::write_file_atomically(dir.file("c.csv"), "new\n");
  CHECK(slurp(dir.file("c.csv")) == "new\n");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(other));
  CHECK(fs::exists(fresh));
}

TEST_CASE("write_file_atomically: a replaced file keeps its mode, a new one takes the umask", "[io][hardening]") {
  testing::TempDir dir;
  const std::string kept = dir.write("kept.json", "old");
  fs::permissions(kept, fs::perms::owner_read | fs::perms::owner_write);
  io::write_file_atomically(kept, "new");
  CHECK(mode_of(kept) == 0600);
  const mode_t old_mask = ::umask(027);
  io::write_file_atomically(dir.file("new.json"), "x");
  ::umask(old_mask);
  CHECK(mode_of(dir.file("new.json")) == 0640);
}

TEST_CASE("digits refuses sizes whose products overflow, and takes any batch size", "[cli][hardening]") {
  DigitsScratch s;
  ProcessResult wide = s.run(quick({"--norm", "none", "--depth", "1", "--width", "4611686018427387904"}));
  CHECK(wide.exit_code == 2);
  CHECK_THAT(wide.err, Catch::StartsWith("digits: deep_net(none) with depth 1 and width 4611686018427387904 cannot be "
                                         "built: ") &&
                           Catch::Contains("more elements than a 64-bit count can hold"));
  ProcessResult groups =
      s.run(quick({"--norm", "group", "--width", "4611686018427387904", "--groups", "4611686018427387904"}));
  CHECK(groups.signal == 0);
  CHECK(groups.exit_code == 2);
  CHECK_THAT(groups.err, Catch::Contains("cannot be built"));
  ProcessResult huge =
      s.run(quick({"--norm", "batch", "--batch-size", "9223372036854775807", "--curves", s.file("c.csv")}));
  INFO(huge.err);
  CHECK(huge.exit_code == 0);
  CHECK(count_lines(slurp(s.file("c.csv"))) == 2);  // one batch of the whole split
  ProcessResult over = s.run(quick({"--batch-size", "9223372036854775808"}));
  CHECK(over.exit_code == 2);
  CHECK_THAT(over.err, Catch::Contains("--batch-size must be at most 9223372036854775807"));
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan's shadow memory cannot start under a small address-space limit
TEST_CASE("digits under an address-space limit too small for OpenBLAS says so instead of hanging", "[cli][hardening]") {
  DigitsScratch s;
  auto limited = [&](const std::string& limit, std::vector<std::string> more) {
    std::vector<std::string> args{"/usr/bin/prlimit",
                                  "--as=" + limit,
                                  testing::kDigitsBinary,
                                  "--data",
                                  s.data().string(),
                                  "--quiet",
                                  "--seeds",
                                  "0",
                                  "--epochs",
                                  "1",
                                  "--depth",
                                  "2"};
    args.insert(args.end(), more.begin(), more.end());
    return testing::run_process(args, s.dir.path());
  };
  ProcessResult two = limited("500000000", {"--jobs", "2", "--threads", "1"});
  CHECK(two.exit_code == 1);  // the options are fine: the machine cannot give what they need
  CHECK(two.err ==
        "digits: the address space is limited to 500 MB (ulimit -v), less than the 662 MB that 2 run(s) at once on 1 "
        "thread(s) each need: OpenBLAS 0.3.21 would hang retrying its buffers instead of failing; raise the limit or "
        "pass --jobs 1 --threads 1 (406 MB)\n");
  ProcessResult one = limited("500000000", {"--jobs", "1", "--threads", "1"});  // what the message suggests
  INFO(one.err);
  CHECK(one.exit_code == 0);
}
#endif

TEST_CASE("digits writes a summary whose paths are not UTF-8", "[cli][hardening]") {
  DigitsScratch s;
  std::string order;
  for (int i = 0; i < 1437; ++i) order += std::to_string(i) + (i < 1436 ? " " : "\n");
  const std::string odd = s.dir.write("order\xff\xfe.txt", order);
  ProcessResult r = s.run(quick({"--norm", "none", "--batch-order", odd, "--summary", s.file("s.json")}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(slurp(s.file("s.json")));
  CHECK_THAT(summary["settings"]["batch_order"].get<std::string>(),
             Catch::EndsWith("order\xef\xbf\xbd\xef\xbf\xbd.txt"));
}

TEST_CASE("load_safetensors names a directory given as a checkpoint", "[io][hardening]") {
  testing::TempDir dir;
  fs::create_directories(dir.file("ck.safetensors"));
  REQUIRE_THROWS_WITH(io::load_safetensors(dir.file("ck.safetensors")),
                      Catch::Contains(dir.file("ck.safetensors") + ": is a directory, not a checkpoint file"));
}

}  // namespace test_hardening
