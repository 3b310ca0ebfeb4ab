#pragma once
// OpenBLAS 0.3.21 (Debian 12's) retries forever when it cannot map a 128 MiB work buffer, so
// under an address-space limit (ulimit -v, prlimit --as) a run could hang instead of failing
// (fixed in later OpenBLAS releases). It maps one buffer per thread it is told to use, in the
// thread that sets the count (openblas_set_num_threads), before any OpenMP thread starts: the
// limit is checked before the program sets its thread count. Measured with the lesson: one
// training thread needs about 320 MB of address space, two about 530 MB.
#include <string>

#include "program.hpp"

namespace minidl::digits {

using apps::ResourceError;

/// Under a finite RLIMIT_AS below what `workers` training threads of `threads` OpenMP threads
/// each need (150 MB + 256 MB per thread that calls OpenBLAS), throws ResourceError naming the
/// limit, what is needed, and the fix (raise the limit, or --jobs 1 --threads 1).
void check_address_space(int workers, int threads);

/// What to say when memory ran out (std::bad_alloc): with the address-space limit and the
/// fix when one is set.
std::string out_of_memory_message();

}  // namespace minidl::digits
