// The digits program where memory and figures run out: a data line without end under an
// address-space limit, more threads than the limit allows, losses too large for the fixed
// form of the results. Each child runs under a deadline, so a case that hangs fails instead
// of stalling the suite.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "support/check.hpp"
#include "support/digits_cli.hpp"
#include "support/limited_process.hpp"

namespace test_hard_cases {

using namespace minidl;
using minidl::testing::ChildLimits;
using minidl::testing::DigitsScratch;
using minidl::testing::LimitedResult;
using minidl::testing::ProcessResult;

namespace {

// OpenBLAS maps a 128 MiB buffer per OpenMP thread when it loads, before main (one per core
// by default): one buffer, whatever the machine, so that the limits below mean the same on
// 2 cores and on 64. The program then starts in about 185 MB.
const std::string kOneBlasThread = "OMP_NUM_THREADS=1";

constexpr size_t kMaxDataBytes = size_t(64) << 20;  // the largest data file digits reads

#if !defined(__SANITIZE_ADDRESS__)  // the cases that run digits under a limit (below)
LimitedResult run_limited(const DigitsScratch& s, rlim_t address_space_bytes, const std::vector<std::string>& args) {
  std::vector<std::string> argv{testing::kDigitsBinary, "--data", s.data().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_limited(argv, s.dir.path(),
                              ChildLimits{.address_space_bytes = address_space_bytes, .environment = {kOneBlasThread}});
}
#endif

}  // namespace

#if !defined(__SANITIZE_ADDRESS__)  // ASan's shadow memory cannot start under an address-space limit
TEST_CASE("digits: a 50 MB digits.csv of one line under an address-space limit is refused at its line",
          "[cli][hardening]") {
  // Read whole, the file once ran out of a 400 MB limit (std::bad_alloc); read a line at a
  // time, 250 MB (the program's 185 MB and one line of at most 1 MiB) is plenty.
  DigitsScratch s;
  const std::string csv = (s.data() / "digits.csv").string();
  {
    std::ofstream out(csv, std::ios::binary | std::ios::trunc);
    const std::string block(1 << 20, '1');
    for (int i = 0; i < 50; ++i) out << block;
  }
  REQUIRE(std::filesystem::file_size(csv) == size_t(50) << 20);
  const LimitedResult r = run_limited(s, 250'000'000, {"--quiet", "--seeds", "0", "--threads", "1"});
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "digits: " + csv +
                     ", line 1: the line is longer than 1048576 bytes (1 MiB), more than any line of a data file "
                     "minidl reads\n");
}

TEST_CASE("digits: a line that never ends (digits.csv is /dev/zero) is refused after 1 MiB", "[cli][hardening]") {
  DigitsScratch s;
  const std::filesystem::path csv = s.data() / "digits.csv";
  std::filesystem::remove(csv);
  std::filesystem::create_symlink("/dev/zero", csv);
  const LimitedResult r = run_limited(s, 250'000'000, {"--quiet", "--seeds", "0", "--threads", "1"});
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::EndsWith("digits.csv, line 1: the line is longer than 1048576 bytes (1 MiB), more than "
                                    "any line of a data file minidl reads\n"));
}

TEST_CASE("digits --threads 16 under a 2 GB address-space limit says so and exits 1, never hangs", "[cli][hardening]") {
  // OpenBLAS 0.3.21 maps a 128 MiB buffer per thread as the count is set and retried forever
  // when the limit refused one: digits once hung there before its check ran.
  DigitsScratch s;
  const std::vector<std::string> quick{"--quiet", "--seeds", "0", "--norm", "none", "--epochs", "1", "--depth", "2"};
  std::vector<std::string> sixteen = quick;
  sixteen.insert(sixteen.end(), {"--threads", "16"});
  const LimitedResult r = run_limited(s, 2'048'000'000, sixteen);  // ulimit -v 2000000
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(
      r.err ==
      "digits: the address space is limited to 2048 MB (ulimit -v), less than the 4246 MB that 1 run(s) at once on 16 "
      "thread(s) each need: OpenBLAS 0.3.21 would hang retrying its buffers instead of failing; raise the limit or "
      "pass --jobs 1 --threads 1 (406 MB)\n");
  // The estimate covers what the threads take: at exactly the estimate (150 + 4 x 256 MB,
  // apps/digits/address_limit.hpp), 4 threads train.
  std::vector<std::string> four = quick;
  four.insert(four.end(), {"--threads", "4"});
  const LimitedResult fits = run_limited(s, 1'174'000'000, four);
  INFO(fits.err);
  CHECK_FALSE(fits.timed_out);
  CHECK(fits.exit_code == 0);
}

TEST_CASE("digits reports running out of memory in one line with the limit, exit 1", "[cli][hardening]") {
  // 64 MiB of valid rows: half a million examples, whose pixels alone take 132 MB (and their
  // vector's last growth 200 MB), more than a 300 MB limit leaves beside the program's 185 MB.
  DigitsScratch s;
  {
    std::string row;
    for (int i = 0; i < 64; ++i) row += "0,";
    row += "0\n";
    std::ofstream out(s.data() / "digits.csv", std::ios::binary | std::ios::trunc);
    for (size_t bytes = 0; bytes + row.size() <= kMaxDataBytes; bytes += row.size()) out << row;
  }
  const LimitedResult r = run_limited(s, 300'000'000, {"--quiet", "--seeds", "0", "--threads", "1"});
  CHECK_FALSE(r.timed_out);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(
      r.err ==
      "digits: out of memory (std::bad_alloc): the address space is limited to 300 MB (ulimit -v); raise the limit\n");
}
#endif

TEST_CASE("digits --lr 1e30 prints its finite losses of 3e31 in exponent form, columns apart", "[cli][hardening]") {
  DigitsScratch s;
  const ProcessResult one = s.run({"--quiet", "--seeds", "0", "--norm", "none", "--lr", "1e30"});
  INFO(one.out << one.err);
  CHECK(one.exit_code == 0);
  CHECK(std::regex_match(one.out, std::regex("no normalization  training loss [0-9]\\.[0-9]{3}e\\+[0-9]{2}   "
                                             "val accuracy 0\\.[0-9]{3}\n")));
  const ProcessResult table = s.run({"--quiet", "--seeds", "0,1", "--norm", "none", "--lr", "1e30", "--epochs", "1"});
  INFO(table.out << table.err);
  CHECK(table.exit_code == 0);
  const std::string figure = "[0-9]\\.[0-9]{3}e\\+[0-9]{2}";
  const std::string spread = figure + " \\[" + figure + ", " + figure + "\\]";
  CHECK(std::regex_search(
      table.out, std::regex("\nno normalization  " + spread + "  +" + spread +
                            "  +0\\.[0-9]{3} \\[0\\.[0-9]{3}, 0\\.[0-9]{3}\\]   \\| " + figure + " +0\\.[0-9]{3}\n")));
}

TEST_CASE("run_limited kills a child that outlives its deadline", "[cli][hardening]") {
  testing::TempDir dir;
  ChildLimits limits;
  limits.deadline = std::chrono::seconds(1);
  const LimitedResult r = testing::run_limited({"/bin/sleep", "30"}, dir.path(), limits);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
}

}  // namespace test_hard_cases
