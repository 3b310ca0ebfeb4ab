// Catch's implementation, compiled once for both test programs (minidl_tests and, with MPI,
// minidl_mpi_tests) and unoptimized: it is the slowest file of either to compile, and no test
// spends its time in it. Each program's main.cpp runs a Catch::Session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
