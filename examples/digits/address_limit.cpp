#include "address_limit.hpp"

#include <sys/resource.h>

#include "minidl/tensor/error.hpp"

namespace minidl::digits {

long long address_space_needed_mb(int workers, int threads) { return 150 + 256LL * workers * threads; }

void check_address_space(int workers, int threads) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const auto limit_mb = static_cast<long long>(limit.rlim_cur / 1000000);
  const long long needed = address_space_needed_mb(workers, threads);
  if (limit_mb >= needed) return;
  std::string fix = "raise the limit";
  if (workers * threads > 1) fix += cat(" or pass --jobs 1 --threads 1 (", address_space_needed_mb(1, 1), " MB)");
  throw UsageError(cat("the address space is limited to ", limit_mb, " MB (ulimit -v), less than the ", needed,
                       " MB that ", workers, " run(s) at once on ", threads,
                       " thread(s) each need: OpenBLAS 0.3.21 would hang retrying its buffers instead of failing; ",
                       fix));
}

}  // namespace minidl::digits
