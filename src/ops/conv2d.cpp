#include "minidl/ops/conv2d.hpp"

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/conv2d_path.hpp"
#include "kernels/conv/winograd.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

void check_options(Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  if (stride.h <= 0 || stride.w <= 0) throw Error(cat("non-positive stride is not supported, got ", to_string(stride)));
  if (padding.h < 0 || padding.w < 0) throw Error(cat("negative padding is not supported, got ", to_string(padding)));
  if (dilation.h <= 0 || dilation.w <= 0)
    throw Error(cat("dilation should be greater than zero, but got ", to_string(dilation)));
  if (groups <= 0) throw Error(cat("non-positive groups is not supported, got groups=", groups));
}

// The geometry of a batched (N, C, H, W) call after PyTorch's checks, in PyTorch's order.
kernels::Conv2dGeometry check_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride,
                                     Size2 padding, Size2 dilation, int64_t groups) {
  check_options(stride, padding, dilation, groups);
  if (weight.dim() != 4)
    throw Error(cat("Expected 4-dimensional weight for 4-dimensional input ", to_string(x.shape()), ", but got ",
                    weight.dim(), "-dimensional weight of size ", to_string(weight.shape()), " instead"));
  if (weight.size(0) % groups != 0)
    throw Error(cat("Given groups=", groups, ", expected weight to be divisible by ", groups,
                    " at dimension 0, but got weight of size ", to_string(weight.shape()), " instead"));
  if (x.size(1) != weight.size(1) * groups)
    throw Error(cat("Given groups=", groups, ", weight of size ", to_string(weight.shape()), ", expected input",
                    to_string(x.shape()), " to have ", weight.size(1) * groups, " channels, but got ", x.size(1),
                    " channels instead"));
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != weight.size(0)))
    throw Error(cat("Given weight of size ", to_string(weight.shape()), ", expected bias to be 1-dimensional with ",
                    weight.size(0), " elements, but got bias of size ", to_string(bias.shape()), " instead"));
  const int64_t padded_h = x.size(2) + 2 * padding.h, padded_w = x.size(3) + 2 * padding.w;
  const int64_t kernel_h = dilation.h * (weight.size(2) - 1) + 1, kernel_w = dilation.w * (weight.size(3) - 1) + 1;
  if (padded_h < kernel_h || padded_w < kernel_w)
    throw Error(cat("Calculated padded input size per channel: (", padded_h, " x ", padded_w, "). Kernel size: (",
                    kernel_h, " x ", kernel_w, "). Kernel size can't be greater than actual input size (input ",
                    to_string(x.shape()), ", weight ", to_string(weight.shape()), ")"));
  return {.batch = x.size(0),
          .in_channels = x.size(1),
          .in_h = x.size(2),
          .in_w = x.size(3),
          .out_channels = weight.size(0),
          .kernel_h = weight.size(2),
          .kernel_w = weight.size(3),
          .stride_h = stride.h,
          .stride_w = stride.w,
          .pad_h = padding.h,
          .pad_w = padding.w,
          .dilation_h = dilation.h,
          .dilation_w = dilation.w,
          .groups = groups};
}

Tensor conv2d_batched(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
                      Size2 dilation, int64_t groups) {
  const kernels::Conv2dGeometry g = check_conv2d(x, weight, bias, stride, padding, dilation, groups);
  const bool winograd = kernels::conv2d_path(g) == kernels::Conv2dPath::Winograd;
  Tensor out = Tensor::empty({g.batch, g.out_channels, g.out_h(), g.out_w()});
  const bool want_x = needs_grad({x}), want_w = needs_grad({weight}), want_b = needs_grad({bias});
  // The weight gradient needs im2col(x). When the whole batch is one chunk (small images:
  // at most 4 MB of columns) the forward's columns are kept for it; otherwise x is saved and
  // unrolled again, chunk by chunk, rather than holding KH * KW copies of a large input.
  // Winograd always transforms x again, chunk by chunk.
  const bool keep_cols = !winograd && want_w && g.chunk() >= g.batch;
  Tensor cols =
      keep_cols ? Tensor::empty({g.in_channels * g.kernel_h * g.kernel_w, g.batch * g.positions()}) : Tensor();
  const float* b = bias.defined() ? bias.data() : nullptr;
  if (winograd) kernels::winograd_forward(g, x.data(), weight.data(), b, out.data());
  else kernels::conv2d_forward(g, x.data(), weight.data(), b, out.data(), keep_cols ? cols.data() : nullptr);
  const SavedTensor saved_x = want_w && !keep_cols ? SavedTensor(x) : SavedTensor();
  const SavedTensor saved_w = want_x ? SavedTensor(weight) : SavedTensor();
  return record(out, "Convolution", {x, weight, bias},
                [g, winograd, saved_x, saved_w, cols, want_x, want_w, want_b, x_shape = x.shape(),
                 w_shape = weight.shape()](const Tensor& dout) -> std::vector<Tensor> {
                  Tensor dx = want_x ? Tensor::empty(x_shape) : Tensor();
                  Tensor dw = want_w ? Tensor::empty(w_shape) : Tensor();
                  Tensor db = want_b ? Tensor::empty({g.out_channels}) : Tensor();
                  const Tensor& sx = saved_x.unpack();
                  const Tensor& sw = saved_w.unpack();
                  const float* xs = sx.defined() ? sx.data() : nullptr;
                  const float* ws = want_x ? sw.data() : nullptr;
                  float* dxs = want_x ? dx.data() : nullptr;
                  float* dws = want_w ? dw.data() : nullptr;
                  float* dbs = want_b ? db.data() : nullptr;
                  if (winograd) kernels::winograd_backward(g, xs, ws, dout.data(), dxs, dws, dbs);
                  else
                    kernels::conv2d_backward(g, xs, ws, dout.data(), dxs, dws, dbs,
                                             cols.defined() ? cols.data() : nullptr);
                  return {dx, dw, db};
                });
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
              Size2 dilation, int64_t groups) {
  if (input.dim() == 4) return conv2d_batched(input, weight, bias, stride, padding, dilation, groups);
  if (input.dim() != 3)
    throw Error(cat("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
                    to_string(input.shape()), " (weight of size ", to_string(weight.shape()), ")"));
  // PyTorch 2.x: one (C, H, W) image is a batch of one, and the batch dim is dropped again.
  const Tensor batched = input.reshape({1, input.size(0), input.size(1), input.size(2)});
  Tensor out = conv2d_batched(batched, weight, bias, stride, padding, dilation, groups);
  return out.reshape({out.size(1), out.size(2), out.size(3)});
}

}  // namespace minidl
