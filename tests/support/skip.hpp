#pragma once
// A Catch test that cannot run here (gnuplot or MPI missing) reports a skip to ctest: it
// prints kSkipMarker and its reason, and returns; the test program then exits 77 if no case
// failed, which ctest counts "Skipped" (SKIP_RETURN_CODE, tests/CMakeLists.txt). In CI
// (CI=true), where every test must run, it fails instead, as tests/torch/run_with_torch.sh
// does for PyTorch.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace minidl::testing {

/// What a skipped test prints before its reason.
inline constexpr std::string_view kSkipMarker = "minidl-test-skipped: ";

/// The exit code of a test program whose cases passed but one or more skipped.
inline constexpr int kSkipExitCode = 77;

/// Set by skip_test; read by the test program's main (support/catch_session.cpp).
inline bool a_test_skipped = false;

/// Reports the running test as skipped for `reason` (the caller returns after it), or, in CI,
/// fails it.
inline void skip_test(const std::string& reason) {
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::string_view(ci) == "true") FAIL(reason << ", and CI runs every test");
  std::cout << kSkipMarker << reason << std::endl;
  a_test_skipped = true;
}

/// True when gnuplot is installed; otherwise reports the running test skipped.
inline bool gnuplot_or_skip() {
  if (std::system("gnuplot --version > /dev/null 2>&1") == 0) return true;
  skip_test("gnuplot is not on PATH (apt-get install -y gnuplot-nox)");
  return false;
}

}  // namespace minidl::testing
