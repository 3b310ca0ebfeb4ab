#pragma once
// OpenBLAS 0.3.21 (Debian 12's) retries forever when it cannot map the work buffer of a
// thread that calls it, so under an address-space limit (ulimit -v, prlimit --as) a run
// could hang instead of failing. Fixed in later OpenBLAS releases.
namespace minidl::digits {

/// Under a finite RLIMIT_AS, lets `callers` threads (each with `threads` OpenMP threads)
/// make one small matrix product side by side, as training will, so that OpenBLAS maps
/// its buffers now; if that does not finish within seconds, prints one line naming the
/// limit and the fix and ends the process with exit code 1. Without a limit it does nothing.
void check_address_space_for_blas(int callers, int threads);

}  // namespace minidl::digits
