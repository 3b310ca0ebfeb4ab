// digits --distributed under mpirun against one process (ctest runs each case as an entry).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "data/digits.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/minidl.hpp"
#include "runs/distributed.hpp"
#include "support/curves_csv.hpp"
#include "support/digits_cli.hpp"
#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "training/digits_train.hpp"

namespace test_distributed_digits {

using namespace minidl;
using minidl::testing::ProcessResult;
using minidl::testing::read_curves;
using minidl::testing::TempDir;

TEST_CASE("split_refusal: the global batch must divide across the ranks, each with enough rows", "[distributed]") {
  using apps::split_refusal;
  REQUIRE(!split_refusal(64, false, false, 2, 1437));
  REQUIRE(!split_refusal(64, false, true, 4, 1437));  // last batch 29: 8, 7, 7, 7 rows
  REQUIRE(*split_refusal(64, false, false, 3, 1437) ==
          "--batch-size 64 does not divide across 3 ranks: choose a multiple of the rank count (each rank takes "
          "batch / ranks)");
  REQUIRE(*split_refusal(64, false, true, 16, 1437) ==
          "the short last batch of 29 examples (1437 in batches of 64) gives some of the 16 ranks fewer than 2 "
          "examples (BatchNorm on a rank's own shard needs 2): pass --drop-last, --sync-bn or another batch size");
  REQUIRE(!split_refusal(64, true, true, 16, 1437));    // --drop-last: no short batch, 4 rows each
  REQUIRE(!split_refusal(64, false, false, 16, 1437));  // 29 rows: at least one each
  REQUIRE(*split_refusal(64, true, true, 64, 1437) ==
          "--batch-size 64 across 64 ranks leaves one example per rank, and BatchNorm on a rank's own shard needs "
          "2: pass --sync-bn or a larger batch");
  REQUIRE(apps::shard_of(29, 0, 4).begin == 0);
  REQUIRE(apps::shard_of(29, 0, 4).end == 8);
  REQUIRE(apps::shard_of(29, 3, 4).begin == 22);
  REQUIRE(apps::shard_of(29, 3, 4).end == 29);
}

TEST_CASE("parallel_refusal names what is missing: MPI in the build, or mpirun", "[distributed]") {
  REQUIRE(*apps::parallel_refusal("digits", false, true) ==
          "--distributed: this digits was built without MPI; install libopenmpi-dev and openmpi-bin and configure "
          "with -DMINIDL_WITH_MPI=ON (or AUTO, the default)");
  REQUIRE(*apps::parallel_refusal("digits", true, false) ==
          "--distributed: not started by mpirun; run it as mpirun -np N digits --distributed ...");
  REQUIRE(!apps::parallel_refusal("digits", true, true));
}

#ifdef MINIDL_DIGITS_EXE
TEST_CASE("digits --distributed outside mpirun, or --sync-bn alone, is one line and exit code 2", "[distributed]") {
  TempDir dir;
  ProcessResult r = minidl::testing::run_process({MINIDL_DIGITS_EXE, "--distributed", "--quiet"}, dir.path());
  REQUIRE(r.exit_code == 2);
  const std::string expected = *apps::parallel_refusal("digits", distributed::built_with_mpi(), false);
  REQUIRE(r.err == "digits: " + expected + "\n");
  r = minidl::testing::run_process({MINIDL_DIGITS_EXE, "--sync-bn", "--quiet"}, dir.path());
  REQUIRE(r.exit_code == 2);
  REQUIRE(r.err == "digits: --sync-bn synchronizes BatchNorm across processes: it needs --distributed\n");
}
#endif

#ifdef MINIDL_DIGITS_EXE
namespace {

// Two epochs of the lesson (46 steps), seed 0: seconds, and long enough for BatchNorm's
// per-shard statistics to show.
const std::vector<std::string> kRun{"--seeds", "0", "--epochs", "2", "--quiet"};

ProcessResult digits_on(int ranks, const TempDir& dir, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (ranks > 0) {
    argv = minidl::testing::mpirun_argv(minidl::testing::kMpirun, ranks);
    argv.insert(argv.end(), {MINIDL_DIGITS_EXE, "--distributed"});
  } else {
    argv = {MINIDL_DIGITS_EXE, "--jobs", "1"};
  }
  argv.insert(argv.end(), kRun.begin(), kRun.end());
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = minidl::testing::run_process(argv, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

// run -> each epoch's (val_loss, val_accuracy), from a validation CSV.
std::map<std::string, std::vector<std::pair<double, double>>> read_validation(const std::string& path) {
  std::istringstream in(minidl::testing::slurp(path));
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<std::pair<double, double>>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream cell_stream(line);
    for (std::string cell; std::getline(cell_stream, cell, ',');) cells.push_back(cell);
    rows[cells[0]].push_back({std::stod(cells[4]), std::stod(cells[5])});
  }
  return rows;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b, size_t steps) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (size_t i = 0; i < std::min(steps, a.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Rows [shard.begin, shard.end) of t (N, ...).
Tensor rows(const Tensor& t, const apps::Shard& shard) {
  const int64_t row = t.numel() / t.size(0);
  Shape shape = t.shape();
  shape[0] = shard.end - shard.begin;
  Tensor out = Tensor::empty(shape);
  std::copy(t.data() + shard.begin * row, t.data() + shard.end * row, out.data());
  return out;
}

std::vector<Tensor> copies(const nn::Module& model) {
  std::vector<Tensor> values;
  for (const auto& buffer : model.named_buffers()) values.push_back(buffer.second.clone());
  return values;
}
void restore(const nn::Module& model, const std::vector<Tensor>& values) {
  size_t i = 0;
  for (const auto& buffer : model.named_buffers()) {
    Tensor target = buffer.second;
    std::copy(values[i].data(), values[i].data() + values[i].numel(), target.data());
    ++i;
  }
}

struct Reference {
  std::vector<double> losses;
  std::vector<double> val_accuracy;
};

// What `world` ranks of plain BatchNorm compute, in one process: every global batch cut into
// the ranks' shards, each normalized with its own statistics, the loss the shards' weighted
// mean (the averaged gradient's), and the running statistics rank 0's, as
// DistributedDataParallel's broadcast_buffers makes them before every forward.
Reference batch_norm_per_shard(int world) {
  const data::DigitsSplit data = data::load_digits(minidl::testing::kProjectData.string());
  Generator init(0);
  auto model = lesson::deep_net(lesson::NormKind::Batch, {}, init);
  optim::SGD optimizer(model->parameters(), {.lr = 0.05});
  data::DataLoader loader(data::TensorDataset(data.X_train, data.y_train),
                          {.batch_size = 64, .shuffle = true, .seed = 0});
  Reference ref;
  for (int epoch = 0; epoch < 2; ++epoch) {
    model->train();
    for (const data::Batch& batch : loader.epoch()) {
      optimizer.zero_grad();
      const int64_t n = batch.inputs.size(0);
      const std::vector<Tensor> before = copies(*model);
      std::vector<Tensor> rank0_after;
      double loss = 0.0;
      for (int r = 0; r < world; ++r) {
        restore(*model, before);
        const apps::Shard shard = apps::shard_of(n, r, world);
        const float share = float(shard.end - shard.begin) / float(n);
        Tensor l = cross_entropy((*model)(rows(batch.inputs, shard)), rows(batch.targets, shard));
        loss += double(l.item()) * share;
        (l * share).backward();
        if (r == 0) rank0_after = copies(*model);
      }
      restore(*model, rank0_after);
      ref.losses.push_back(loss);
      optimizer.step();
    }
    model->eval();
    ref.val_accuracy.push_back(lesson::evaluate(*model, data.X_val, data.y_val).accuracy);
  }
  return ref;
}

// Tolerances (losses near 2.3, float32 spacing 2.4e-7 there). One process and N ranks differ
// only in summation order: each rank's gradient sums its shard, the allreduce adds the N
// partial results, the step loss is a sum of N weighted means; a few ulps per step. How far
// such rounding grows depends on the network, measured in one process by swapping the GEMM
// kernels (OPENBLAS_CORETYPE=Haswell against AVX-512), the same size of perturbation:
// no norm: identical; LayerNorm and RMSNorm: within 2e-5 over the first 20 steps, then up
// to 2e-4; GroupNorm (8 groups of 8): within 6e-5 over the first 8 steps, 5e-3 at step 13,
// 0.5 by step 37. On 4 ranks the perturbation is larger than a kernel swap (4 partial sums,
// GEMMs of 16 rows): with the AVX-512 kernel GroupNorm's steps differ by 2.2e-6 up to step 5,
// then 2.4e-5, 8.3e-5, 1.8e-4 at steps 6-8 (the swap: 2.2e-5 at step 8), so it is compared
// over 5 steps.
// So each norm is compared over the steps where rounding stays small, with 1e-5 for no
// norm and the BatchNorm runs (the lesson measured 1e-6 between float32 and float64 over
// 115 steps: they do not amplify) and 1e-4 for the rest, 5x what the kernel swap moved.
struct Comparison {
  const char* run;
  size_t steps;      // compared from the first
  double tolerance;  // on each step's loss
  bool final_figures;
};
constexpr Comparison kComparisons[] = {
    {"none", 46, 1e-5, true}, {"batch", 46, 1e-5, true}, {"layer", 20, 1e-4, false},
    {"rms", 20, 1e-4, false}, {"group", 5, 1e-4, false},
};
constexpr double kStepTolerance = 1e-5;
// Validation accuracy after each epoch: equal, or one of the 360 examples flipped by a logit
// tie that rounding broke the other way.
constexpr double kAccuracyTolerance = 1.0 / 360 + 1e-9;

void check_matches_one_process(int ranks) {
  TempDir dir;
  const std::string norms = "none,layer,rms,group";
  digits_on(0, dir,
            {"--norm", norms + ",batch", "--curves", dir.file("one.csv"), "--val-curves", dir.file("one_val.csv")});
  digits_on(ranks, dir, {"--norm", norms, "--curves", dir.file("n.csv"), "--val-curves", dir.file("n_val.csv")});
  digits_on(
      ranks, dir,
      {"--norm", "batch", "--sync-bn", "--curves", dir.file("sync.csv"), "--val-curves", dir.file("sync_val.csv")});
  auto one = read_curves(dir.file("one.csv")), many = read_curves(dir.file("n.csv"));
  many["batch"] = read_curves(dir.file("sync.csv"))["batch"];
  auto one_val = read_validation(dir.file("one_val.csv")), many_val = read_validation(dir.file("n_val.csv"));
  many_val["batch"] = read_validation(dir.file("sync_val.csv"))["batch"];
  for (const Comparison& c : kComparisons) {
    const std::string run = c.run;
    INFO(run << " on " << ranks << " ranks");
    REQUIRE(many[run].size() == 46);
    const double worst = max_difference(one[run], many[run], c.steps);
    CAPTURE(worst);
    CHECK(worst <= c.tolerance);
    if (!c.final_figures) continue;  // later steps drift apart, as they do with other GEMM kernels
    for (size_t e = 0; e < 2; ++e)
      CHECK(std::abs(one_val[run][e].second - many_val[run][e].second) <= kAccuracyTolerance);
  }
}

void check_batch_norm_is_per_shard(int ranks) {
  TempDir dir;
  digits_on(0, dir, {"--norm", "batch", "--curves", dir.file("one.csv")});
  digits_on(ranks, dir, {"--norm", "batch", "--curves", dir.file("n.csv"), "--val-curves", dir.file("n_val.csv")});
  const std::vector<double> global = read_curves(dir.file("one.csv"))["batch"];
  const std::vector<double> sharded = read_curves(dir.file("n.csv"))["batch"];
  const auto sharded_val = read_validation(dir.file("n_val.csv"))["batch"];
  const Reference ref = batch_norm_per_shard(ranks);
  const double vs_global = max_difference(sharded, global, 46), vs_shards = max_difference(sharded, ref.losses, 46);
  CAPTURE(vs_global, vs_shards);
  CHECK(vs_global > 1e-3);  // other statistics: another training, 50x past the tolerance
  CHECK(vs_shards <= kStepTolerance);
  for (size_t e = 0; e < 2; ++e) CHECK(std::abs(sharded_val[e].second - ref.val_accuracy[e]) <= kAccuracyTolerance);
}

}  // namespace

TEST_CASE("digits --distributed on 2 ranks: every norm but plain BatchNorm trains as one process", "[mpi_digits]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_matches_one_process(2);
}
TEST_CASE("digits --distributed on 4 ranks: every norm but plain BatchNorm trains as one process", "[mpi_digits]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_matches_one_process(4);
}
TEST_CASE("digits --distributed on 2 ranks: plain BatchNorm normalizes each rank's shard alone", "[mpi_digits]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_batch_norm_is_per_shard(2);
}
TEST_CASE("digits --distributed on 4 ranks: plain BatchNorm normalizes each rank's shard alone", "[mpi_digits]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  check_batch_norm_is_per_shard(4);
}
TEST_CASE("digits --distributed refuses a batch that does not divide across the ranks", "[mpi_digits]") {
  if (!minidl::testing::mpirun_or_skip()) return;
  TempDir dir;
  std::vector<std::string> argv = minidl::testing::mpirun_argv(minidl::testing::kMpirun, 3);
  argv.insert(argv.end(), {MINIDL_DIGITS_EXE, "--distributed", "--quiet"});
  ProcessResult r = minidl::testing::run_process(argv, dir.path());
  REQUIRE(r.exit_code == 2);
  REQUIRE(r.err.find("digits: --batch-size 64 does not divide across 3 ranks") != std::string::npos);
}
#endif

}  // namespace test_distributed_digits
