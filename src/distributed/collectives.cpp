#include "minidl/distributed/collectives.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

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

// What ring_sum reads each rank's own values through. The ring touches every own value
// exactly once (block r is sent at step 0, every other own block is read once as the left
// neighbour's piece is added to it), so a division made there costs no pass of its own.
// InPlace: the own values are out's, as they are (a sum).
template <typename T>
struct InPlace {
  T* data;
  const T* send_piece(size_t begin, size_t, T*) const { return data + begin; }
  void add(size_t begin, size_t count, const T* received) const {
    T* sum = data + begin;
    for (size_t i = 0; i < count; ++i) sum[i] += received[i];
  }
};

// Divided: the own values are the segments' (null: zeros), each divided as it is read; the
// sums go into out. The bits of dividing into out first, then summing in place.
class Divided {
 public:
  Divided(std::span<const Segment> in, float* out, float divisor) : in_(in), out_(out), divisor_(divisor) {
    starts_.reserve(in.size());
    size_t at = 0;
    for (const Segment& s : in) {
      starts_.push_back(at);
      at += s.size;
    }
  }
  // staging (count) = own[begin, begin + count) / divisor
  const float* send_piece(size_t begin, size_t count, float* staging) const {
    const float d = divisor_;  // a local: the stores below could alias a member
    each_stretch(begin, count, [&](const float* own, size_t at, size_t n) {
      float* to = staging + at;
      if (own == nullptr) std::fill(to, to + n, 0.0f);
      else
        for (size_t i = 0; i < n; ++i) to[i] = own[i] / d;
    });
    return staging;
  }
  // out[begin, begin + count) = own / divisor + received
  void add(size_t begin, size_t count, const float* received) const {
    const float d = divisor_;
    each_stretch(begin, count, [&](const float* own, size_t at, size_t n) {
      float* sum = out_ + begin + at;
      const float* from = received + at;
      if (own == nullptr)
        for (size_t i = 0; i < n; ++i) sum[i] = 0.0f + from[i];  // the bits of a zero-filled bucket's sum
      else
        for (size_t i = 0; i < n; ++i) sum[i] = own[i] / d + from[i];
    });
  }

 private:
  // f(own values or null, offset into the range, count) for each segment's part of [begin, begin + count).
  template <typename F>
  void each_stretch(size_t begin, size_t count, F&& f) const {
    if (count == 0) return;
    size_t s = size_t(std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin()) - 1;
    for (size_t done = 0; done < count; ++s) {
      const size_t from = begin + done - starts_[s], n = std::min(count - done, in_[s].size - from);
      f(in_[s].data == nullptr ? nullptr : in_[s].data + from, done, n);
      done += n;
    }
  }

  std::span<const Segment> in_;
  std::vector<size_t> starts_;  // (segments) each segment's first index into out
  float* out_;
  float divisor_;
};

// out = the sum over ranks of every rank's own values (read through `own`), as a ring: the
// buffer is cut into one block per rank; in N - 1 steps each rank adds the block its left
// neighbour passes on (reduce-scatter), then in N - 1 more passes the finished blocks round
// (allgather). Each rank sends 2 (N - 1) / N of the buffer, the least any allreduce can.
// Every block is summed once, in one order, and copied to the others, so every rank ends
// with the same bits. OpenMPI's default choice for large buffers on one machine is slower
// (docs/distributed.md, "The allreduce" and "Speed").
template <typename T, typename Own>
void ring_sum(const Own& own, std::span<T> out, MPI_Datatype type) {
  const int p = world_size(), r = rank(), right = (r + 1) % p, left = (r + p - 1) % p;
  const size_t n = out.size(), piece = ring_piece_bytes / sizeof(T);
  thread_local std::vector<T> scratch, staging;  // (piece) each: the left neighbour's piece, and own's to send
  scratch.resize(piece);
  staging.resize(piece);
  T* data = out.data();
  // Every rank makes the same number of exchanges per step (those of the widest block, block
  // 0), some with empty pieces, so that each send meets its receive.
  const size_t widest = block(n, p, 0).size;
  for (int step = 0; step < p - 1; ++step) {
    const Block sent = block(n, p, (r - step + p) % p), in = block(n, p, (r - step - 1 + 2 * p) % p);
    for (size_t at = 0; at < widest; at += piece) {
      const size_t out_count = at < sent.size ? std::min(piece, sent.size - at) : 0;
      const size_t in_count = at < in.size ? std::min(piece, in.size - at) : 0;
      // Step 0 sends this rank's own block; later steps the sums made the step before.
      const T* send = step == 0 ? own.send_piece(sent.begin + at, out_count, staging.data()) : data + sent.begin + at;
      send_receive(send, out_count, scratch.data(), in_count, type, right, left);
      own.add(in.begin + at, in_count, scratch.data());
    }
  }
  for (int step = 0; step < p - 1; ++step) {
    const Block sent = block(n, p, (r + 1 - step + p) % p), in = block(n, p, (r - step + p) % p);
    send_receive(data + sent.begin, sent.size, data + in.begin, in.size, type, right, left);
  }
}

bool use_ring(size_t bytes) { return world_size() > 1 && bytes >= ring_from_bytes; }

template <typename T>
void all_reduce_values(std::span<T> values, ReduceOp op, MPI_Datatype type) {
  if (values.empty()) return;
  const int count = mpi_count(values.size(), "all_reduce");
  tally(values.size(), sizeof(T));
  if (use_ring(values.size_bytes())) ring_sum(InPlace<T>{values.data()}, values, type);
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

void all_reduce_divided(std::span<const Segment> in, std::span<float> out, float divisor) {
  size_t total = 0;
  for (const Segment& s : in) total += s.size;
  if (total != out.size())
    throw Error(cat("all_reduce_divided: the segments hold ", total, " floats, the output ", out.size()));
  if (out.empty()) return;
  const int count = mpi_count(out.size(), "all_reduce_divided");
  tally(out.size(), sizeof(float));
  std::vector<Segment> nonempty;  // the ring looks segments up by their first index
  for (const Segment& s : in)
    if (s.size > 0) nonempty.push_back(s);
  const Divided own(nonempty, out.data(), divisor);
  if (use_ring(out.size_bytes())) {
    ring_sum(own, out, MPI_FLOAT);
    return;
  }
  own.send_piece(0, out.size(), out.data());  // small: divided into out, then MPI's sum
  if (world_size() > 1) MPI_Allreduce(MPI_IN_PLACE, out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

void all_reduce_divided(std::span<float> values, float divisor) {
  const Segment whole{values.data(), values.size()};
  all_reduce_divided(std::span<const Segment>(&whole, 1), values, divisor);
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
