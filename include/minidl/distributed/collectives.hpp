#pragma once
// Collectives over every process of the run (MPI_COMM_WORLD), as torch.distributed's: every
// rank calls the same collectives in the same order, each with the same sizes. Tensors are
// contiguous float32 and changed in place.
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

/// Every rank's tensor takes root's values.
void broadcast(const Tensor& tensor, int root = 0);
void broadcast(std::span<float> values, int root = 0);

/// Every rank's values, rank after rank: world_size() * values.size() doubles.
std::vector<double> all_gather(std::span<const double> values);

}  // namespace minidl::distributed
