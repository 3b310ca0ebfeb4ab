// A distributed program whose last rank throws while the others wait for it in a barrier:
// run_or_abort must end them all, naming the rank (ctest mpi.throwing_rank_ends_the_run).
#include "minidl/distributed/environment.hpp"
#include "minidl/tensor/error.hpp"

int main() {
  namespace dist = minidl::distributed;
  dist::Environment mpi;
  return dist::run_or_abort("abort_helper", [] {
    if (dist::rank() == dist::world_size() - 1) throw minidl::Error("a failure on one rank only");
    dist::barrier();  // never passes: the last rank does not come
    return 0;
  });
}
