#include "minidl/distributed/collectives.hpp"

#include <mpi.h>

#include <atomic>
#include <limits>

#include "minidl/distributed/environment.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::distributed {
namespace {

std::atomic<int64_t> calls{0}, bytes_handed{0};

void tally(size_t elements, size_t element_bytes) {
  calls.fetch_add(1, std::memory_order_relaxed);
  bytes_handed.fetch_add(int64_t(elements * element_bytes), std::memory_order_relaxed);
}

int mpi_count(size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max()))
    throw Error(cat(what, ": ", n, " elements exceed MPI's int count (at most ", std::numeric_limits<int>::max(),
                    "); split the buffer"));
  return int(n);
}

template <typename T>
void all_reduce_values(std::span<T> values, ReduceOp op, MPI_Datatype type) {
  if (values.empty()) return;
  tally(values.size(), sizeof(T));
  MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_count(values.size(), "all_reduce"), type, MPI_SUM, MPI_COMM_WORLD);
  if (op == ReduceOp::Average) {
    const T n = T(world_size());
    for (T& v : values) v /= n;
  }
}

}  // namespace

void all_reduce(std::span<float> values, ReduceOp op) { all_reduce_values(values, op, MPI_FLOAT); }
void all_reduce(std::span<double> values, ReduceOp op) { all_reduce_values(values, op, MPI_DOUBLE); }

void all_reduce(const Tensor& tensor, ReduceOp op) {
  Tensor handle = tensor;  // written in place through its handle
  all_reduce(std::span<float>(handle.data(), size_t(handle.numel())), op);
  handle.bump_version();
}

void broadcast(std::span<float> values, int root) {
  if (values.empty()) return;
  tally(values.size(), sizeof(float));
  MPI_Bcast(values.data(), mpi_count(values.size(), "broadcast"), MPI_FLOAT, root, MPI_COMM_WORLD);
}

void broadcast(const Tensor& tensor, int root) {
  Tensor handle = tensor;
  broadcast(std::span<float>(handle.data(), size_t(handle.numel())), root);
  handle.bump_version();
}

std::vector<double> all_gather(std::span<const double> values) {
  std::vector<double> all(values.size() * size_t(world_size()));
  const int count = mpi_count(values.size(), "all_gather");
  tally(values.size(), sizeof(double));
  MPI_Allgather(values.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, MPI_COMM_WORLD);
  return all;
}

Traffic traffic() { return {calls.load(), bytes_handed.load()}; }

void reset_traffic() {
  calls = 0;
  bytes_handed = 0;
}

}  // namespace minidl::distributed
