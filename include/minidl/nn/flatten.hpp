#pragma once
// Flatten and Unflatten, PyTorch's nn.Flatten and nn.Unflatten: views with other shapes.
#include <cstdint>

#include "minidl/nn/module.hpp"
#include "minidl/tensor/shape.hpp"

namespace minidl::nn {

class Flatten : public Module {
 public:
  /// Flatten() keeps the batch dim: (N, C, H, W) -> (N, C * H * W).
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim_(start_dim), end_dim_(end_dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Flatten"; }
  std::string extra_repr() const override;

 private:
  int64_t start_dim_, end_dim_;
};

/// Unflatten(1, {1, 8, 8}): dim `dim` (negative counts from the end) split into sizes
/// (one -1 is inferred): (N, 64) -> (N, 1, 8, 8).
class Unflatten : public Module {
 public:
  Unflatten(int64_t dim, Shape sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Unflatten"; }
  std::string extra_repr() const override;

 private:
  int64_t dim_;
  Shape sizes_;
};

}  // namespace minidl::nn
