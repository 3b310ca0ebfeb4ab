#pragma once
// Runs jobs on several threads with the results of one by one: each job owns its generators,
// and its records land in its own slot.
#include <functional>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

/// Called after each job with the jobs done so far, the total, and the fraction of the total
/// cost done (what an estimate of the time left should use: jobs run costliest first).
using Progress = std::function<void(size_t done, size_t total, double cost_done)>;

/// Runs every job, up to `workers` at once (each thread with one OpenMP/OpenBLAS thread when
/// workers > 1), the costliest first; returns each job's records at its index. A job that
/// throws rethrows here after all have finished.
std::vector<std::vector<Record>> run_jobs(const std::vector<Job>& jobs, int workers, const Progress& progress = {});

}  // namespace minidl::lab
