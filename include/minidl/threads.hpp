#pragma once
// How many threads minidl's kernels use: OpenMP loops and OpenBLAS alike.

namespace minidl {

/// Sets the thread count of OpenMP regions and of OpenBLAS (n >= 1). Results do not
/// depend on it: minidl's reductions combine per-thread partials in a fixed order.
void set_num_threads(int n);
/// The thread count OpenMP regions use.
int get_num_threads();

}  // namespace minidl
