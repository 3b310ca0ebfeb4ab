#include "minidl/ops/norm/group_norm.hpp"

#include "minidl/tensor/error.hpp"
#include "row_norm_op.hpp"

namespace minidl {

void detail::check_group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias) {
  if (x.dim() < 2)
    throw Error(
        cat("group_norm: expected an input of shape (N, C, *) with at least 2 dims, got ", to_string(x.shape())));
  const int64_t n = x.size(0), c = x.size(1);
  if (num_groups <= 0 || c % num_groups != 0)
    throw Error(cat("Expected number of channels in input to be divisible by num_groups, but got input of shape ",
                    to_string(x.shape()), " and num_groups=", num_groups));
  check_affine("group_norm", "weight", weight, {c}, x);
  check_affine("group_norm", "bias", bias, {c}, x);
  const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);  // positions per channel
  if (n * (c / num_groups) * inner == 1) {                     // F.group_norm's check, in training and eval alike
    Shape grouped{n * c / num_groups, num_groups};
    grouped.insert(grouped.end(), x.shape().begin() + 2, x.shape().end());
    throw Error(cat("Expected more than 1 value per channel when training, got input size ", to_string(grouped)));
  }
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  detail::check_group_norm(x, num_groups, weight, bias);
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);  // positions per channel
  const kernels::RowNormLayout layout{
      .rows = n * num_groups, .channels = c / num_groups, .inner = inner, .groups = num_groups};
  return detail::row_norm("NativeGroupNorm", x, weight, bias, layout, eps);
}

}  // namespace minidl
