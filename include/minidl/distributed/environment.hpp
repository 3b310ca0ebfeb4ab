#pragma once
// The MPI environment of a data-parallel run, started by mpirun:
//
//   minidl::distributed::Environment mpi;  // MPI_Init here, MPI_Finalize at scope exit
//   int me = minidl::distributed::rank(), n = minidl::distributed::world_size();
//
// Every process runs the same program on its own shard of the data; the collectives in
// collectives.hpp keep them in step. Built only when CMake found MPI (MINIDL_WITH_MPI).
#include <functional>
#include <string>

namespace minidl::distributed {

/// True when this build of minidl has MPI: MINIDL_WITH_MPI, set by CMake for every target
/// linking minidl.
constexpr bool built_with_mpi() { return MINIDL_WITH_MPI != 0; }

/// True when mpirun (OpenMPI, MPICH or any PMIx launcher) started this process: its
/// environment names the process's rank.
bool launched_by_mpirun();

/// Initializes MPI (one thread calls it, MPI_THREAD_FUNNELED) and finalizes it when it goes
/// out of scope. One per process, for the process's life: MPI cannot start again.
class Environment {
 public:
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

/// This process's rank in 0..world_size()-1, and the number of processes.
int rank();
int world_size();
/// The processes on this machine (OpenMPI's local size; 1 when unknown): they share its cores.
int local_size();
/// Returns when every process has called it.
void barrier();

/// Ends every process of the run: prints "<program>: rank R of N: <message>" on stderr and
/// calls MPI_Abort, so no other process waits forever in a collective for this one.
[[noreturn]] void abort_run(const std::string& program, const std::string& message, int exit_code = 1);

/// Runs body and returns its exit code; an exception escaping it ends the whole run through
/// abort_run (naming this rank and the exception's message).
int run_or_abort(const std::string& program, const std::function<int()>& body);

}  // namespace minidl::distributed
