#pragma once
// digits --distributed: the same runs trained data-parallel by every process mpirun started.
// The global --batch-size is split across the ranks; rank 0 alone prints and writes files.
#include <functional>
#include <optional>
#include <string>

#include "options.hpp"

namespace minidl::digits {

/// Starts MPI, trains with run(settings) on every rank (rank 0's settings print and write,
/// the others' do not) and returns the exit code. Throws UsageError for lesson::parallel_refusal().
/// An error on any rank ends every rank (MPI_Abort), naming the rank.
int run_distributed(Settings s, const std::function<int(Settings)>& run);

}  // namespace minidl::digits
