#include "distributed.hpp"

#include <algorithm>
#include <iostream>
#include <thread>

#include "data/digits.hpp"
#include "lesson/parallel.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/tensor/error.hpp"
#include "minidl/threads.hpp"
#if MINIDL_WITH_MPI
#include "lesson/mpi_parallel.hpp"
#endif

namespace minidl::digits {

#if MINIDL_WITH_MPI

int run_distributed(Settings s, const std::function<int(Settings)>& run) {
  if (auto why = lesson::parallel_refusal(true, distributed::launched_by_mpirun())) throw UsageError(*why);
  distributed::Environment mpi;
  const int rank = distributed::rank(), world = distributed::world_size();
  // Decided alike on every rank from the same options, so every rank returns here together.
  const bool plain_batch_norm =
      !s.sync_bn && std::find(s.norms.begin(), s.norms.end(), lesson::NormKind::Batch) != s.norms.end();
  const int64_t examples = data::load_digits(s.data_dir).X_train.size(0);
  if (auto why = lesson::split_refusal(s.train.batch_size, s.train.drop_last, plain_batch_norm, world, examples)) {
    if (rank == 0) std::cerr << "digits: " << *why << std::endl;
    return 2;
  }
  s.jobs = 1;  // the runs one after another: every rank must reach each collective in the same order
  // The ranks on this machine share its cores.
  if (!s.threads)
    s.threads = std::max(1, int(std::max(1u, std::thread::hardware_concurrency())) / distributed::local_size());
  s.train.parallel = lesson::mpi_parallel({.sync_batch_norm = s.sync_bn});
  if (rank != 0) {  // rank 0 alone prints and writes
    s.quiet = true;
    s.curves.clear();
    s.validation.clear();
    s.summary.clear();
    s.tensorboard.clear();
    s.report.clear();
    s.save_dir.clear();
    s.print = false;
  }
  return distributed::run_or_abort("digits", [&] { return run(s); });
}

#else

int run_distributed(Settings, const std::function<int(Settings)>&) {
  throw UsageError(*lesson::parallel_refusal(false, false));
}

#endif

}  // namespace minidl::digits
