#include "minidl/distributed/collectives.hpp"

#include <mpi.h>

#include <algorithm>
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

// Buffers from this size on are summed by ring_sum below; smaller ones by MPI_Allreduce,
// whose recursive doubling costs fewer messages (latency) where bandwidth does not matter.
constexpr size_t ring_from_bytes = 256 * 1024;
// The ring's reduce phase receives into a scratch piece of this many bytes and adds it while
// it is in cache; the allgather phase receives in place.
constexpr size_t ring_piece_bytes = 128 * 1024;
constexpr int ring_tag = 0x6d64;  // point-to-point tag of ring_sum's messages

struct Block {
  size_t begin = 0, size = 0;
};

// Block b of p near-equal blocks of n values (the last ones may be short or empty).
Block block(size_t n, int p, int b) {
  const size_t width = (n + size_t(p) - 1) / size_t(p), begin = std::min(n, width * size_t(b));
  return {begin, std::min(n, begin + width) - begin};
}

template <typename T>
void send_receive(const T* send, size_t send_count, T* receive, size_t receive_count, MPI_Datatype type, int right,
                  int left) {
  MPI_Sendrecv(send, int(send_count), type, right, ring_tag, receive, int(receive_count), type, left, ring_tag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// values = the sum over ranks, in place, as a ring: the buffer is cut into one block per rank;
// in N - 1 steps each rank adds the block its left neighbour passes on (reduce-scatter),
// then in N - 1 more passes the finished blocks round (allgather). Each rank sends
// 2 (N - 1) / N of the buffer, the least any allreduce can. Every block is summed once, in
// one order, and copied to the others, so every rank ends with the same bits. OpenMPI's
// default choice for large buffers on one machine moved 33.6 MB in 21-38 ms on 2 ranks
// where this ring takes 13 ms (docs/distributed.md).
template <typename T>
void ring_sum(std::span<T> values, MPI_Datatype type) {
  const int p = world_size(), r = rank(), right = (r + 1) % p, left = (r + p - 1) % p;
  const size_t n = values.size(), piece = ring_piece_bytes / sizeof(T);
  thread_local std::vector<T> scratch;  // (piece): one piece of the left neighbour's block
  scratch.resize(piece);
  T* data = values.data();
  // Every rank makes the same number of exchanges per step (those of the widest block, block
  // 0), some with empty pieces, so that each send meets its receive.
  const size_t widest = block(n, p, 0).size;
  for (int step = 0; step < p - 1; ++step) {
    const Block out = block(n, p, (r - step + p) % p), in = block(n, p, (r - step - 1 + 2 * p) % p);
    for (size_t at = 0; at < widest; at += piece) {
      const size_t out_count = at < out.size ? std::min(piece, out.size - at) : 0;
      const size_t in_count = at < in.size ? std::min(piece, in.size - at) : 0;
      send_receive(data + out.begin + at, out_count, scratch.data(), in_count, type, right, left);
      T* sum = data + in.begin + at;
      for (size_t i = 0; i < in_count; ++i) sum[i] += scratch[i];
    }
  }
  for (int step = 0; step < p - 1; ++step) {
    const Block out = block(n, p, (r + 1 - step + p) % p), in = block(n, p, (r - step + p) % p);
    send_receive(data + out.begin, out.size, data + in.begin, in.size, type, right, left);
  }
}

template <typename T>
void all_reduce_values(std::span<T> values, ReduceOp op, MPI_Datatype type) {
  if (values.empty()) return;
  const int count = mpi_count(values.size(), "all_reduce");
  tally(values.size(), sizeof(T));
  if (world_size() > 1 && values.size_bytes() >= ring_from_bytes) ring_sum(values, type);
  else MPI_Allreduce(MPI_IN_PLACE, values.data(), count, type, MPI_SUM, MPI_COMM_WORLD);
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
