// Catch's implementation, compiled once for both test programs (minidl_tests and, with MPI,
// minidl_mpi_tests) and unoptimized: it is the slowest file of either to compile, and no test
// spends its time in it.
#define CATCH_CONFIG_RUNNER
#include "support/catch_session.hpp"

#include <catch2/catch.hpp>

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
