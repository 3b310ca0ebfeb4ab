#include "minidl/nn/flatten.hpp"

#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/pool.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Tensor Flatten::forward(const Tensor& input) { return flatten(input, start_dim_, end_dim_); }

std::string Flatten::extra_repr() const { return cat("start_dim=", start_dim_, ", end_dim=", end_dim_); }

Tensor Unflatten::forward(const Tensor& input) {
  const int64_t rank = input.dim();
  const int64_t d = dim_ < 0 ? dim_ + rank : dim_;
  int64_t known = 1, inferred = 0;
  for (int64_t s : sizes_) s == -1 ? ++inferred : known *= s;
  if (d < 0 || d >= rank || inferred > 1 ||
      (inferred == 0 ? known != input.size(d) : known == 0 || input.size(d) % known != 0))
    throw Error(cat("unflatten: Provided sizes ", to_string(sizes_), " don't multiply up to the size of dim ", dim_,
                    " (", d >= 0 && d < rank ? input.size(d) : 0, ") in the input tensor of size ",
                    to_string(input.shape())));
  Shape shape(input.shape().begin(), input.shape().begin() + d);
  for (int64_t s : sizes_) shape.push_back(s == -1 ? input.size(d) / known : s);
  shape.insert(shape.end(), input.shape().begin() + d + 1, input.shape().end());
  return input.reshape(shape);
}

std::string Unflatten::extra_repr() const { return cat("dim=", dim_, ", unflattened_size=", python_tuple(sizes_)); }

}  // namespace minidl::nn
