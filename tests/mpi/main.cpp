// The library's distributed tests, run by ctest under mpirun (mpi.library_np1/2/4): every
// rank runs every test case; a failure on any rank fails the run. The cases only compare
// values each rank can compute alone, so they never wait on a rank that failed.
#include "minidl/distributed/environment.hpp"
#include "support/catch_session.hpp"

int main(int argc, char** argv) {
  minidl::distributed::Environment mpi;
  return run_catch_session(argc, argv);
}
