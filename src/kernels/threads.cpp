#include "minidl/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include "minidl/tensor/error.hpp"

namespace minidl {

void set_num_threads(int n) {
  if (n < 1) throw Error(cat("set_num_threads: expected at least 1 thread, got ", n));
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int get_num_threads() { return omp_get_max_threads(); }

}  // namespace minidl
