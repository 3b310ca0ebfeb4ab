#include "minidl/distributed/environment.hpp"

#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "minidl/tensor/error.hpp"

namespace minidl::distributed {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MPI_LOCALRANKID"})
    if (std::getenv(name)) return true;
  return false;
}

Environment::Environment() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw Error("distributed::Environment: MPI is already initialized (one Environment per process)");
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int local_size() {
  const char* size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int n = size ? std::atoi(size) : 1;
  return n > 0 ? n : 1;
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

void abort_run(const std::string& program, const std::string& message, int exit_code) {
  // One write of the whole line, flushed before MPI_Abort kills this process.
  std::cerr << cat(program, ": rank ", rank(), " of ", world_size(), ": ", message, "\n") << std::flush;
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] true if it ever did
}

int run_or_abort(const std::string& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    abort_run(program, cat("error: ", e.what(), " (every rank is stopped)"));
  } catch (...) {
    abort_run(program, "error: an unknown exception (every rank is stopped)");
  }
}

}  // namespace minidl::distributed
