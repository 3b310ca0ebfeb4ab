#pragma once
// Collectives over every process of the run (MPI_COMM_WORLD), as torch.distributed's: every
// rank calls the same collectives in the same order, each with the same sizes. Tensors are
// contiguous float32 and changed in place.
#include <cstdint>
#include <span>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::distributed {

enum class ReduceOp {
  Sum,      // every rank gets the sum over ranks
  Average,  // the sum divided by world_size()
};

/// tensor = the sum (or average) of every rank's tensor, on every rank. Throws naming the
/// tensor's shape when it holds more than MPI's int count of elements. No graph is recorded.
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
void all_reduce(std::span<float> values, ReduceOp op = ReduceOp::Sum);
void all_reduce(std::span<double> values, ReduceOp op = ReduceOp::Sum);

/// A stretch of all_reduce_divided's input: `size` floats at `data`, or `size` zeros when
/// data is null (a parameter without a gradient).
struct Segment {
  const float* data = nullptr;
  size_t size = 0;
};

/// out = the sum over ranks of in / divisor, where in is the segments one after another
/// (their sizes add up to out.size(), the same on every rank): each rank's values divided
/// before they are summed, the order of PyTorch DDP's average (divide, then sum), with the
/// bits of dividing into out, then all_reduce(out, Sum). The division costs no pass over
/// memory of its own: from 256 KiB on every input float is read once, inside the ring (as it
/// is sent or added to), and every output float written once. A segment may be out's own
/// memory at its own place (in place); otherwise in and out must not overlap. Throws when
/// the segments' sizes do not add up to out's.
void all_reduce_divided(std::span<const Segment> in, std::span<float> out, float divisor);
/// In place: values = the sum over ranks of values / divisor.
void all_reduce_divided(std::span<float> values, float divisor);

/// Every rank's tensor takes root's values.
void broadcast(const Tensor& tensor, int root = 0);
void broadcast(std::span<float> values, int root = 0);

/// Every rank's values, rank after rank: world_size() * values.size() doubles.
std::vector<double> all_gather(std::span<const double> values);

/// What this rank has handed to the collectives above since the process started (or since
/// reset_traffic): one count per MPI call and the bytes of this rank's buffer in it (a
/// broadcast counts its buffer on every rank, an all_gather this rank's part). The network
/// then moves a multiple of it that depends on MPI's algorithm (a ring allreduce sends
/// 2 (N - 1) / N times its buffer). An empty all_reduce or broadcast makes no call and counts nothing.
struct Traffic {
  int64_t collectives = 0;
  int64_t bytes = 0;
};
Traffic traffic();
void reset_traffic();

}  // namespace minidl::distributed
