// The library's distributed tests, run by ctest under mpirun (mpi.library_np1/2/4): every
// rank runs every test case; a failure on any rank fails the run. The cases only compare
// values each rank can compute alone, so they never wait on a rank that failed.
#include <catch2/catch.hpp>

#include "minidl/distributed/environment.hpp"

int main(int argc, char** argv) {
  minidl::distributed::Environment mpi;
  return Catch::Session().run(argc, argv);
}
