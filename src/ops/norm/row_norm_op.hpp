#pragma once
// Shared by layer_norm, rms_norm and group_norm: the one autograd-wired op over the
// row kernel (src/kernels/norm/row_norm.cpp).
#include "kernels/norm/channel_norm.hpp"
#include "kernels/norm/row_norm.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl::detail {

/// Runs row_norm_forward on x (any shape holding layout.rows x layout.cols() values) and
/// records its backward for x, weight and bias (either may be undefined).
Tensor row_norm(const char* name, const Tensor& x, const Tensor& weight, const Tensor& bias,
                const kernels::RowNormLayout& layout, double eps);

/// The layout of LayerNorm and RMSNorm: x (*, normalized_shape) as rows of
/// numel(normalized_shape) values. Throws unless x ends with normalized_shape.
kernels::RowNormLayout trailing_layout(const Tensor& x, const Shape& normalized_shape);

/// The rows of stats p (3, count) as mean, mean_rest and rstd; uncentered (1, count): rstd.
kernels::NormStats stats_rows(float* p, bool centered, int64_t count);

/// Throws unless t is undefined or has the given shape; `what` names t and the reason.
void check_affine(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& x);

/// group_norm's checks, shared with composite::group_norm so both refuse alike: x (N, C, *),
/// C divisible by num_groups, weight and bias undefined or (C), and more than one value in
/// all (F.group_norm's check, with PyTorch's message, in training and eval alike).
void check_group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias);

/// The layout of batch_norm and sync_batch_norm: x (N, C, *) as N items of C channels of
/// the positions of *. Throws, naming op, unless x has at least 2 dims.
kernels::ChannelNormLayout channel_layout(const char* op, const Tensor& x);

/// batch_norm's checks, shared with composite::batch_norm so both refuse alike: x (N, C, *),
/// the per-channel tensors (check_channel_tensors), more than one value per channel when
/// training (PyTorch's message), running statistics when not.
void check_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                      const Tensor& bias, bool training);

/// batch_norm's and sync_batch_norm's checks of their per-channel tensors: each undefined or
/// of shape (C), and the running statistics given together.
void check_channel_tensors(const char* op, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                           const Tensor& bias, int64_t channels, const Tensor& x);

inline const float* data_or_null(const Tensor& t) { return t.defined() ? t.data() : nullptr; }
inline float* data_or_null(Tensor& t) { return t.defined() ? t.data() : nullptr; }
inline Tensor empty_if(bool wanted, const Shape& shape) { return wanted ? Tensor::empty(shape) : Tensor(); }

}  // namespace minidl::detail
