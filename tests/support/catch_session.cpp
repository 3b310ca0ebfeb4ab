// Catch's implementation, compiled once for both test programs (minidl_tests and, with MPI,
// minidl_mpi_tests) and unoptimized: it is the slowest file of either to compile, and no test
// spends its time in it.
#define CATCH_CONFIG_RUNNER
#include "support/catch_session.hpp"

#include <catch2/catch.hpp>

#include "support/skip.hpp"

// Exits with the number of failed assertions (Catch caps it at 255), 1 for 77 failures so that
// ctest never reads them as a skip, or, when every case passed but one skipped, kSkipExitCode.
int run_catch_session(int argc, char** argv) {
  using minidl::testing::kSkipExitCode;
  const int failed = Catch::Session().run(argc, argv);
  if (failed != 0) return failed == kSkipExitCode ? 1 : failed;
  return minidl::testing::a_test_skipped ? kSkipExitCode : 0;
}
