#pragma once
// charlm --distributed: the same runs trained data-parallel by every process mpirun started.
// The global --batch-size is split across the ranks; rank 0 alone prints and writes files.
#include <functional>

#include "options.hpp"

namespace minidl::charlm {

/// Starts MPI, trains with run(settings) on every rank (rank 0's settings print and write,
/// the others' do not) and returns the exit code. Throws UsageError when minidl was built
/// without MPI or mpirun did not start this process; a batch the ranks do not divide is one
/// line from rank 0 and exit code 2 on every rank. An error on any rank ends every rank
/// (MPI_Abort), naming the rank.
int run_distributed(Settings s, const std::function<int(Settings)>& run);

}  // namespace minidl::charlm
