// The sgemm call log file (bench/gemm_log.hpp) that bench_lesson --record-gemm writes and
// bench/sgemm_lesson replays.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "gemm_log.hpp"
#include "gemm_recorder.hpp"
#include "minidl/minidl.hpp"

namespace test_gemm_log {

using namespace minidl;
using bench::GemmLog;

namespace {
std::string temp_path(const std::string& name) { return std::string(MINIDL_BINARY_DIR) + "/" + name; }

void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
}  // namespace

TEST_CASE("a gemm log numbers buffers by first use and survives a round trip through its file", "[gemm][bench]") {
  Generator gen(1);
  nn::Linear layer(3, 4, gen);
  const Tensor x = Tensor::randn({5, 3}, gen).requires_grad_();
  std::vector<bench::GemmCall> calls;
  {
    bench::GemmRecorder recorder;
    sum(layer(x)).backward();
    calls = recorder.calls();
  }
  REQUIRE(calls.size() == 3);  // forward, dx, dW
  const GemmLog log = bench::make_gemm_log(calls);
  REQUIRE(log.calls.size() == 3);
  CHECK(log.calls[0].a == 0);  // x, W, out: the first three buffers
  CHECK(log.calls[0].b == 1);
  CHECK(log.calls[0].c == 2);
  CHECK(log.extents[0] == 15);  // x (5, 3)
  CHECK(log.extents[1] == 12);  // W (4, 3)
  CHECK(log.calls[1].b == 1);   // dx = g W reads the same W
  const std::string path = temp_path("test_gemm_log.bin");
  bench::write_gemm_log(log, path);
  const GemmLog back = bench::read_gemm_log(path);
  CHECK(back.extents == log.extents);
  REQUIRE(back.calls.size() == log.calls.size());
  for (size_t i = 0; i < log.calls.size(); ++i) {
    const auto &a = log.calls[i], &b = back.calls[i];
    CHECK((a.transpose_a == b.transpose_a && a.transpose_b == b.transpose_b && a.m == b.m && a.n == b.n && a.k == b.k &&
           a.beta == b.beta && a.a == b.a && a.b == b.b && a.c == b.c));
  }
  std::remove(path.c_str());
}

TEST_CASE("reading a gemm log names the file and what is wrong with it", "[gemm][bench]") {
  const std::string path = temp_path("test_gemm_log_bad.bin");
  CHECK_THROWS_WITH(bench::read_gemm_log(path + ".missing"),
                    Catch::Contains("cannot read") && Catch::Contains("test_gemm_log_bad.bin.missing"));
  write_bytes(path, "NOTALOG!");
  CHECK_THROWS_WITH(bench::read_gemm_log(path), Catch::Contains("not a gemm log (expected MDLGEMM1 first)"));
  write_bytes(path, "MDLGEMM1\x05");
  CHECK_THROWS_WITH(bench::read_gemm_log(path), Catch::Contains("test_gemm_log_bad.bin: truncated"));
  GemmLog log;
  log.extents = {4};
  log.calls = {{false, false, 2, 2, 1, 0.0f, 0, 0, 3}};  // c names buffer 3 of 1
  bench::write_gemm_log(log, path);
  CHECK_THROWS_WITH(bench::read_gemm_log(path), Catch::Contains("a buffer id out of range"));
  std::remove(path.c_str());
}

}  // namespace test_gemm_log
