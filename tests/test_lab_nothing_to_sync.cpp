// The lab's experiment 15: the traffic it counts from the lesson's model, against hand counts,
// and (with MPI) against what the collectives counted in the runs it made.
#include <catch2/catch.hpp>
#include <sstream>

#include "experiments/experiments.hpp"
#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace test_lab_nothing_to_sync {

using minidl::lab::rank_traffic;
using minidl::lesson::NormKind;

namespace {
// The lesson's network: 8 x Linear(64, 64) + Linear(64, 10), and 8 norm layers of 64 channels.
constexpr int64_t kLinearFloats = 8 * (64 * 64 + 64) + 64 * 10 + 10;  // 33 930
constexpr int64_t kNormFloats = 8 * 2 * 64;                           // weight and bias
constexpr int64_t kBatchNormBuffers = 8 * (64 + 64 + 1);              // running mean, var, batches tracked
}  // namespace

TEST_CASE("lab nothing_to_sync: LayerNorm hands the collectives its gradients only", "[lab]") {
  const auto t = rank_traffic(NormKind::Layer, false, 2);
  CHECK(t.gradient_bytes == 4 * (kLinearFloats + kNormFloats));
  CHECK(t.buffer_bytes == 0);
  CHECK(t.statistics_bytes == 0);
  CHECK(t.bookkeeping_bytes == 16);
  CHECK(t.step_collectives == 3);  // one bucket, the loss, the stop flag
  CHECK(t.setup_bytes == 4 * (kLinearFloats + kNormFloats));
  CHECK(t.setup_collectives == 1);
  CHECK(rank_traffic(NormKind::None, false, 2).gradient_bytes == 4 * kLinearFloats);
  CHECK(rank_traffic(NormKind::Layer, false, 1).gradient_bytes == 0);  // one rank averages nothing
}

TEST_CASE("lab nothing_to_sync: BatchNorm adds its buffers, SyncBatchNorm its statistics", "[lab]") {
  const auto local = rank_traffic(NormKind::Batch, false, 4);
  CHECK(local.buffer_bytes == 4 * kBatchNormBuffers);
  CHECK(local.statistics_bytes == 0);
  CHECK(local.step_collectives == 4);
  CHECK(local.setup_bytes == 4 * (kLinearFloats + kNormFloats + kBatchNormBuffers));
  CHECK(local.setup_collectives == 2);
  const auto sync = rank_traffic(NormKind::Batch, true, 4);
  CHECK(sync.statistics_bytes == 8 * 8 * ((1 + 2 * 64) + 2 * 64));  // per layer: gathered, then summed
  CHECK(sync.step_collectives == 4 + 2 * 8);
  CHECK(sync.step_bytes() == local.step_bytes() + sync.statistics_bytes);
}

#ifdef MINIDL_LAB_EXE
TEST_CASE("lab nothing_to_sync --quick: the counted traffic is what the collectives counted", "[lab][mpi]") {
  if (!minidl::testing::mpirun_or_skip()) return;  // the lab runs digits under mpirun
  minidl::testing::TempDir dir;
  const auto r = minidl::testing::run_process(
      {MINIDL_LAB_EXE, "run", "nothing_to_sync", "--quick", "--out", dir.file("out")}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream csv(minidl::testing::slurp(dir.file("out/nothing_to_sync.csv")));
  std::string line;
  std::getline(csv, line);
  REQUIRE(line.ends_with("counted_bytes,measured_bytes,counted_collectives,measured_collectives"));
  int rows = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() == 15);
    INFO(line);
    CHECK(cells[4] == "ok");
    CHECK(cells[11] == cells[12]);  // bytes
    CHECK(cells[13] == cells[14]);  // calls
    CHECK(std::stod(cells[12]) > 0);
    ++rows;
  }
  CHECK(rows == 6);  // N = 1, 2 x (local BatchNorm, LayerNorm, SyncBatchNorm), one seed
}
#endif

}  // namespace test_lab_nothing_to_sync
