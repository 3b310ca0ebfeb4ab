// charlm --distributed: its refusals, and under mpirun against one process (ctest runs each
// case as an entry).
#ifdef MINIDL_CHARLM_EXE
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "minidl/distributed/environment.hpp"
#include "support/curves_csv.hpp"
#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_charlm_distributed {

using minidl::testing::ProcessResult;
using minidl::testing::read_curves;
using minidl::testing::TempDir;

namespace {

ProcessResult charlm_alone(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), MINIDL_CHARLM_EXE);
  return minidl::testing::run_process(args, dir.path());
}

}  // namespace

TEST_CASE("charlm --distributed outside mpirun, or --sync-bn alone, is one line and exit code 2", "[charlm]") {
  TempDir dir;
  ProcessResult r = charlm_alone(dir, {"--distributed", "--quiet"});
  REQUIRE(r.exit_code == 2);
  if (minidl::distributed::built_with_mpi())
    REQUIRE(r.err == "charlm: --distributed: not started by mpirun; run it as mpirun -np N charlm --distributed ...\n");
  else
    REQUIRE(r.err ==
            "charlm: --distributed: this charlm was built without MPI; install libopenmpi-dev and openmpi-bin and "
            "configure with -DMINIDL_WITH_MPI=ON (or AUTO, the default)\n");
  r = charlm_alone(dir, {"--sync-bn", "--quiet"});
  REQUIRE(r.exit_code == 2);
  REQUIRE(r.err == "charlm: --sync-bn synchronizes BatchNorm across processes: it needs --distributed\n");
}

namespace {

// The default model and data, 40 steps of 32 words, seed 0; evaluations at steps 20 and 40.
constexpr size_t kSteps = 40;
const std::vector<std::string> kRun{"--steps", "40", "--eval-every", "20"};

// charlm (ranks 0: alone; otherwise under mpirun with --distributed), seed 0, 1 thread a rank.
ProcessResult charlm_on(int ranks, const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{MINIDL_CHARLM_EXE};
  if (ranks > 0) {
    argv = minidl::testing::mpirun_argv(minidl::testing::kMpirun, ranks);
    argv.insert(argv.end(), {MINIDL_CHARLM_EXE, "--distributed"});
  }
  argv.insert(argv.end(), {"--seeds", "0", "--quiet", "--threads", "1"});
  argv.insert(argv.end(), args.begin(), args.end());
  return minidl::testing::run_process(argv, dir.path());
}

ProcessResult charlm_ok(int ranks, const TempDir& dir, const std::vector<std::string>& args) {
  ProcessResult r = charlm_on(ranks, dir, args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Tolerances (losses near 2.7, float32 spacing 2.4e-7 there). One process and N ranks differ
// only in summation order: each rank's weight gradients sum its shard's rows, the allreduce
// adds the N partial sums, the step loss is a sum of N weighted means; SyncBatchNorm merges
// the ranks' statistics in double. The rule of docs/numerics-and-pytorch.md: compare with
// 1e-4 over the steps where other roundings of the same run stay within 2.5e-5 (a quarter).
// A swap of OpenBLAS's kernels in one process (Haswell, SkylakeX, Sandybridge), a rounding
// of the same size, moves no step loss of these 40 steps by more than 2.4e-7, one ulp, for
// every norm: all 40 are compared, to 1e-4. The validation losses of layer and rms do not
// move; those of the BatchNorms move by up to 2.6e-5 under the kernel swap: after 20 or 40
// steps eval mode normalizes with running statistics still far from the data's (momentum
// 0.1), which amplifies a last-bit change of them about a hundred times. They are compared
// to 2e-4, eight times the swap's.
constexpr double kTolerance = 1e-4;
constexpr double kBatchNormValTolerance = 2e-4;

// The step losses (--curves) and validation losses (--val-curves) of `norms` on `ranks`
// ranks (with `more` options) against one process's, run by run.
void check_matches_one_process(const std::string& norms, std::vector<std::string> more) {
  TempDir dir;
  std::vector<std::string> one_args = kRun, two_args = kRun;
  one_args.insert(one_args.end(),
                  {"--norm", norms, "--curves", dir.file("one.csv"), "--val-curves", dir.file("one_val.csv")});
  two_args.insert(two_args.end(),
                  {"--norm", norms, "--curves", dir.file("two.csv"), "--val-curves", dir.file("two_val.csv")});
  two_args.insert(two_args.end(), more.begin(), more.end());
  charlm_ok(0, dir, one_args);
  charlm_ok(2, dir, two_args);
  auto one = read_curves(dir.file("one.csv")), two = read_curves(dir.file("two.csv"));
  auto one_val = read_curves(dir.file("one_val.csv")), two_val = read_curves(dir.file("two_val.csv"));
  REQUIRE(one.size() == two.size());
  for (const auto& [run, losses] : one) {
    INFO(run);
    REQUIRE(losses.size() == kSteps);
    const double steps = max_difference(losses, two[run]), val = max_difference(one_val[run], two_val[run]);
    CAPTURE(steps, val);
    CHECK(steps <= kTolerance);
    CHECK(val <= (run.find("batch") == 0 ? kBatchNormValTolerance : kTolerance));
  }
}

}  // namespace

TEST_CASE("charlm --distributed on 2 ranks: LayerNorm and RMSNorm train as one process", "[mpi_charlm]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_matches_one_process("layer,rms", {});
}

TEST_CASE("charlm --distributed --sync-bn on 2 ranks: both BatchNorms train as one process", "[mpi_charlm]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_matches_one_process("batch,batch-masked", {"--sync-bn"});
}

TEST_CASE("charlm --distributed on 2 ranks: plain BatchNorm trains on each rank's own statistics", "[mpi_charlm]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  TempDir dir;
  charlm_ok(0, dir, {"--steps", "40", "--norm", "batch", "--curves", dir.file("one.csv")});
  charlm_ok(2, dir, {"--steps", "40", "--norm", "batch,batch-masked", "--curves", dir.file("two.csv")});
  auto one = read_curves(dir.file("one.csv")), two = read_curves(dir.file("two.csv"));
  REQUIRE(two["batch-pre"].size() == kSteps);
  REQUIRE(two["batch-masked-pre"].size() == kSteps);
  const double vs_global = max_difference(one["batch-pre"], two["batch-pre"]);
  CAPTURE(vs_global);
  CHECK(vs_global > 10 * kTolerance);  // statistics of 16 words, not 32: another training (4.6e-3 here)
}

TEST_CASE("charlm --distributed: rank 0 alone prints and writes, its summary counting the ranks", "[mpi_charlm]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  TempDir dir;
  const ProcessResult r = charlm_ok(2, dir, {"--steps", "2", "--summary", dir.file("s.json"), "--sample", "2"});
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = r.out.find(text); at != std::string::npos; at = r.out.find(text, at + 1)) ++n;
    return n;
  };
  CHECK(count("samples of layer-pre seed 0:\n") == 1);
  CHECK(count("over seeds 0: mean [min, max]\n") == 1);
  const auto summary = nlohmann::json::parse(minidl::testing::slurp(dir.file("s.json")));
  CHECK(summary["distributed"]["ranks"] == 2);
  CHECK(summary["distributed"]["sync_bn"] == false);
  CHECK(summary["distributed"]["collectives"].get<int64_t>() > 0);
}

TEST_CASE("charlm --distributed refuses a batch that does not divide across the ranks", "[mpi_charlm]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  TempDir dir;
  const ProcessResult r = charlm_on(2, dir, {"--batch-size", "31"});
  REQUIRE(r.exit_code == 2);
  const std::string line =
      "charlm: --batch-size 31 does not divide across 2 ranks: choose a multiple of the rank count (each rank takes "
      "batch / ranks)\n";
  REQUIRE(r.err.find(line) == 0);  // from rank 0 alone; mpirun's own report follows
  REQUIRE(r.err.find(line, 1) == std::string::npos);
}

}  // namespace test_charlm_distributed
#endif
