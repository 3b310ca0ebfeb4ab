#include "address_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "minidl/minidl.hpp"

namespace minidl::digits {

void check_address_space_for_blas(int callers, int threads) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  // The watchdog: a product of 64 x 64 matrices takes microseconds; 10 s means OpenBLAS is
  // stuck retrying a mapping that cannot succeed.
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (done_changed.wait_for(lock, std::chrono::seconds(10), [&] { return done; })) return;
    std::fprintf(stderr,
                 "digits: the address space is limited to %llu MB (ulimit -v), too little for OpenBLAS's buffers "
                 "with %d run(s) at once on %d thread(s) each (it retries forever instead of failing); raise the "
                 "limit or pass --jobs 1 --threads 1\n",
                 static_cast<unsigned long long>(limit.rlim_cur / 1000000), callers, threads);
    std::fflush(stderr);
    ::_exit(1);
  });
  std::vector<std::thread> workers;
  for (int i = 0; i < callers; ++i)
    workers.emplace_back([threads] {
      set_num_threads(threads);
      NoGradGuard no_grad;
      Tensor a = Tensor::ones({256, 256});  // large enough for OpenBLAS to use its threads too
      (void)matmul(a, a);
    });
  for (std::thread& worker : workers) worker.join();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  done_changed.notify_one();
  watchdog.join();
}

}  // namespace minidl::digits
