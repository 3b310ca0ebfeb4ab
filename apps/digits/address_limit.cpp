#include "address_limit.hpp"

#include <sys/resource.h>

#include <optional>

namespace minidl::digits {

namespace {

// The soft RLIMIT_AS in MB (10^6 bytes, as ulimit -v's KB are 10^3), or nothing when unlimited.
std::optional<long long> address_limit_mb() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<long long>(limit.rlim_cur / 1000000);
}

// The address space, in MB, that `workers` training threads of `threads` OpenMP threads each
// are given before OpenBLAS could run out: 150 + 256 per thread that calls it.
long long address_space_needed_mb(int workers, int threads) { return 150 + 256LL * workers * threads; }

}  // namespace

void check_address_space(int workers, int threads) {
  const std::optional<long long> limit_mb = address_limit_mb();
  if (!limit_mb) return;
  const long long needed = address_space_needed_mb(workers, threads);
  if (*limit_mb >= needed) return;
  std::string fix = "raise the limit";
  if (workers * threads > 1) fix += cat(" or pass --jobs 1 --threads 1 (", address_space_needed_mb(1, 1), " MB)");
  throw ResourceError(cat("the address space is limited to ", *limit_mb, " MB (ulimit -v), less than the ", needed,
                          " MB that ", workers, " run(s) at once on ", threads,
                          " thread(s) each need: OpenBLAS 0.3.21 would hang retrying its buffers instead of failing; ",
                          fix));
}

std::string out_of_memory_message() {
  const std::optional<long long> limit_mb = address_limit_mb();
  if (!limit_mb) return "out of memory (std::bad_alloc)";
  return cat("out of memory (std::bad_alloc): the address space is limited to ", *limit_mb,
             " MB (ulimit -v); raise the limit");
}

}  // namespace minidl::digits
