// The lab program as a user runs it: bad arguments, a missing gnuplot, the same results on
// several threads as one by one, and the report it writes.
#ifdef MINIDL_LAB_EXE
#include <catch2/catch.hpp>
#include <filesystem>

#include "registry.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_lab_cli {

using minidl::testing::count_lines;
using minidl::testing::ProcessResult;
using minidl::testing::slurp;
using minidl::testing::TempDir;

namespace {

ProcessResult run_lab(const TempDir& dir, const std::vector<std::string>& args) {
  return minidl::testing::run_program(MINIDL_LAB_EXE, dir.path(), args);
}

}  // namespace

TEST_CASE("lab: bad arguments get one line and exit code 2", "[lab][cli]") {
  TempDir dir;
  const std::string out = dir.file("out");
  std::string choices;  // every experiment of every chapter, in the registry's order
  for (const auto& experiment : minidl::lab::all_experiments()) choices += experiment->name() + ", ";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "lab: no command: use `lab list` or `lab run NAME... | all` (see lab --help)\n"},
      {{"frobnicate"}, "lab: unknown command \"frobnicate\": use `lab list` or `lab run NAME... | all`\n"},
      {{"run"}, "lab: `lab run` needs experiment names or all (see `lab list`)\n"},
      {{"run", "nope", "--out", out}, "lab: unknown experiment \"nope\": choose from " + choices + "or all\n"},
      {{"run", "depth", "depth", "--out", out}, "lab: experiment \"depth\" is named twice\n"},
      {{"run", "all", "--seeds", "4-2", "--out", out},
       "lab: --seeds \"4-2\": the range 4-2 runs backwards (write 2-4)\n"},
      {{"run", "all", "--jobs", "0", "--out", out}, "lab: --jobs expects a whole number from 1 to 1024, got \"0\"\n"},
      {{"run", "all", "--out", "/proc/no/such"}, ""},
      {{"list", "depth"}, "lab: `lab list` takes no names, got \"depth\"\n"},
  };
  for (const auto& [args, message] : cases) {
    const ProcessResult r = run_lab(dir, args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    if (!message.empty()) CHECK(r.err == message);
    CHECK(r.out.empty());
  }
}

TEST_CASE("lab: an --out that is a file is refused before anything runs", "[lab][cli]") {
  TempDir dir;
  const std::string file = dir.write("taken", "x");
  const ProcessResult r = run_lab(dir, {"run", "rms_offset", "--out", file});
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("lab: --out " + file + " cannot be created"));
}

TEST_CASE("lab list names every experiment with its claim", "[lab][cli]") {
  TempDir dir;
  const ProcessResult r = run_lab(dir, {"list"});
  REQUIRE(r.exit_code == 0);
  size_t expected_lines = minidl::lab::chapters().size() - 1;  // a blank line between chapters
  for (const minidl::lab::Chapter& chapter : minidl::lab::chapters()) {
    CHECK(r.out.find(chapter.title + "\n") != std::string::npos);
    expected_lines += 1 + chapter.experiments.size();
  }
  CHECK(count_lines(r.out) == expected_lines);
  CHECK(r.out.starts_with("The digits: an MLP, a CNN and residual stacks\n 1. depth "));
  CHECK(r.out.find(" 7. batch_mates ") != std::string::npos);
  CHECK(r.out.find("12. cnn_batch_size ") != std::string::npos);
  CHECK(r.out.find("14. adam_norm ") != std::string::npos);
  CHECK(r.out.find("15. nothing_to_sync ") != std::string::npos);
}

TEST_CASE("lab without gnuplot says so in one line", "[lab][cli]") {
  TempDir dir;
  const ProcessResult r =
      run_lab(dir, {"run", "rms_offset", "--out", dir.file("out")});  // warm: the command works with gnuplot
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> argv{
      "/usr/bin/env", "PATH=" + dir.file("empty"), MINIDL_LAB_EXE, "run", "rms_offset", "--out", dir.file("out2")};
  const ProcessResult missing = minidl::testing::run_process(argv, dir.path());
  CHECK(missing.exit_code == 1);
  CHECK(missing.err ==
        "lab: gnuplot is not on PATH, and the lab draws its pictures with it: install gnuplot (apt-get install "
        "gnuplot-nox)\n");
}

TEST_CASE("lab: several jobs at once give the records of one by one", "[lab][cli]") {
  TempDir dir;
  auto run = [&](const std::string& jobs) {
    const std::string out = dir.file("out" + jobs);
    const ProcessResult r = run_lab(dir, {"run", "eval_mode", "group_norm", "batch_mates", "--quick", "--seeds", "3",
                                          "--jobs", jobs, "--out", out});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return out;
  };
  const std::string one = run("1"), two = run("2");
  for (const char* csv : {"eval_mode.csv", "group_norm.csv", "batch_mates.csv"}) {
    INFO(csv);
    const std::string a = slurp(std::filesystem::path(one) / csv);
    CHECK(!a.empty());
    CHECK(a == slurp(std::filesystem::path(two) / csv));
  }
  const std::string readme = slurp(std::filesystem::path(one) / "README.md");
  CHECK(readme.find("## 5. Forgetting model.eval()") != std::string::npos);
  CHECK(readme.find("![eval_mode](eval_mode.png)") != std::string::npos);
  CHECK(readme.find("**Verdict: ") != std::string::npos);
  CHECK(readme.find("| 1 | [Depth](#1-depth) |") != std::string::npos);  // not run: listed as such
  CHECK(readme.find("**not run**") != std::string::npos);
  CHECK(std::filesystem::file_size(std::filesystem::path(one) / "eval_mode.png") > 1000);
  // The training runs' curves as the comparison page beside the Markdown (report_page.hpp).
  CHECK(readme.find("[group_norm.html](group_norm.html)") != std::string::npos);
  const std::string page = slurp(std::filesystem::path(one) / "group_norm.html");
  CHECK(page.find("\"name\":\"group part=training groups=") != std::string::npos);
  CHECK(page.find("Dygraph") != std::string::npos);
}

}  // namespace test_lab_cli
#endif
