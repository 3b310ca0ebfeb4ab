#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>

#include "lab.hpp"
#include "minidl/threads.hpp"

namespace minidl::lab {

std::vector<std::vector<Record>> run_jobs(const std::vector<Job>& jobs, int workers, const Progress& progress) {
  std::vector<std::vector<Record>> records(jobs.size());
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].cost > jobs[b].cost; });
  std::atomic<size_t> next{0};
  std::mutex lock;
  size_t done = 0;
  double total_cost = 0.0, cost_done = 0.0;
  for (const Job& job : jobs) total_cost += job.cost;
  std::exception_ptr first_error;
  const int threads_per_job = workers > 1 ? 1 : get_num_threads();
  auto worker = [&] {
    set_num_threads(threads_per_job);  // OpenMP's count is per thread: set it on this one
    for (size_t k; (k = next++) < order.size();) {
      const size_t i = order[k];
      try {
        records[i] = jobs[i].run();
      } catch (...) {
        std::lock_guard guard(lock);
        if (!first_error) first_error = std::current_exception();
      }
      std::lock_guard guard(lock);
      ++done;
      cost_done += jobs[i].cost;
      if (progress) progress(done, jobs.size(), total_cost > 0 ? cost_done / total_cost : 1.0);
    }
  };
  const int count = std::max(1, std::min<int>(workers, int(jobs.size())));
  std::vector<std::thread> helpers;
  for (int j = 1; j < count; ++j) helpers.emplace_back(worker);
  worker();
  for (std::thread& helper : helpers) helper.join();
  if (first_error) std::rethrow_exception(first_error);
  return records;
}

}  // namespace minidl::lab
