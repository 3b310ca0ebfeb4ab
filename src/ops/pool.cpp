#include "minidl/ops/pool.hpp"

#include <memory>
#include <vector>

#include "kernels/conv/pool2d.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

void check_rank(const char* op, const Tensor& x) {
  if ((x.dim() != 3 && x.dim() != 4) || x.numel() == 0)
    throw Error(cat(op, ": non-empty 3D or 4D (batch mode) tensor expected for input, but got input of size: ",
                    to_string(x.shape())));
}

// The input's shape with its last two dims replaced by (h, w).
Shape with_plane(const Shape& shape, int64_t h, int64_t w) {
  Shape out = shape;
  out[out.size() - 2] = h;
  out.back() = w;
  return out;
}

kernels::Pool2dGeometry check_pool(const char* op, const Tensor& x, Size2 kernel, Size2& stride, Size2 padding,
                                   Size2 dilation) {
  check_rank(op, x);
  if (stride == Size2(0)) stride = kernel;  // PyTorch's stride=None
  if (kernel.h <= 0 || kernel.w <= 0)
    throw Error(cat(op, ": kernel_size must be greater than zero, but got ", to_string(kernel)));
  if (stride.h <= 0 || stride.w <= 0)
    throw Error(cat(op, ": stride must be greater than zero, but got ", to_string(stride)));
  if (dilation.h <= 0 || dilation.w <= 0)
    throw Error(cat(op, ": dilation must be greater than zero, but got ", to_string(dilation)));
  if (padding.h < 0 || padding.w < 0 || padding.h > kernel.h / 2 || padding.w > kernel.w / 2)
    throw Error(cat("pad should be at most half of kernel size, but got pad=", to_string(padding),
                    " and kernel_size=", to_string(kernel)));
  const int64_t h = x.size(-2), w = x.size(-1);
  const kernels::Pool2dGeometry g{.planes = x.numel() / (h * w),
                                  .in_h = h,
                                  .in_w = w,
                                  .kernel_h = kernel.h,
                                  .kernel_w = kernel.w,
                                  .stride_h = stride.h,
                                  .stride_w = stride.w,
                                  .pad_h = padding.h,
                                  .pad_w = padding.w,
                                  .dilation_h = dilation.h,
                                  .dilation_w = dilation.w};
  if (g.out_h() < 1 || g.out_w() < 1)
    throw Error(cat(op, ": Given input size: (", x.size(-3), "x", h, "x", w, "). Calculated output size: (", x.size(-3),
                    "x", std::max<int64_t>(0, g.out_h()), "x", std::max<int64_t>(0, g.out_w()),
                    "). Output size is too small"));
  return g;
}

}  // namespace

Tensor max_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride, Size2 padding, Size2 dilation) {
  const kernels::Pool2dGeometry g = check_pool("max_pool2d", input, kernel_size, stride, padding, dilation);
  Tensor out = Tensor::empty(with_plane(input.shape(), g.out_h(), g.out_w()));
  auto argmax = std::make_shared<std::vector<int64_t>>(size_t(out.numel()));  // (N, C, OH, OW)
  kernels::max_pool2d_forward(g, input.data(), out.data(), argmax->data());
  return record(out, "MaxPool2DWithIndices", {input}, [g, argmax, shape = input.shape()](const Tensor& dout) {
    Tensor dx = Tensor::empty(shape);
    kernels::max_pool2d_backward(g, dout.data(), argmax->data(), dx.data());
    return std::vector<Tensor>{dx};
  });
}

Tensor avg_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride, Size2 padding, bool count_include_pad) {
  const kernels::Pool2dGeometry g = check_pool("avg_pool2d", input, kernel_size, stride, padding, 1);
  Tensor out = Tensor::empty(with_plane(input.shape(), g.out_h(), g.out_w()));
  kernels::avg_pool2d_forward(g, count_include_pad, input.data(), out.data());
  return record(out, "AvgPool2D", {input}, [g, count_include_pad, shape = input.shape()](const Tensor& dout) {
    Tensor dx = Tensor::empty(shape);
    kernels::avg_pool2d_backward(g, count_include_pad, dout.data(), dx.data());
    return std::vector<Tensor>{dx};
  });
}

Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size) {
  if (input.dim() != 3 && input.dim() != 4)
    throw Error(cat("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", to_string(input.shape())));
  for (int64_t d = 1; d < input.dim(); ++d)
    if (input.size(d) == 0)
      throw Error(
          cat("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
              "input has sizes ",
              to_string(input.shape()), " with dimension ", d, " being empty"));
  if (output_size.h < 1 || output_size.w < 1)
    throw Error(cat("adaptive_avg_pool2d(): output_size must be positive, got ", to_string(output_size)));
  const int64_t h = input.size(-2), w = input.size(-1), planes = input.numel() / (h * w);
  const int64_t oh = output_size.h, ow = output_size.w;
  Tensor out = Tensor::empty(with_plane(input.shape(), oh, ow));
  kernels::adaptive_avg_pool2d_forward(planes, h, w, oh, ow, input.data(), out.data());
  return record(out, "AdaptiveAvgPool2D", {input}, [planes, h, w, oh, ow, shape = input.shape()](const Tensor& dout) {
    Tensor dx = Tensor::empty(shape);
    kernels::adaptive_avg_pool2d_backward(planes, h, w, oh, ow, dout.data(), dx.data());
    return std::vector<Tensor>{dx};
  });
}

Tensor flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) {
  const int64_t rank = std::max<int64_t>(input.dim(), 1);  // a scalar flattens to (1)
  const auto wrap = [&](int64_t d) {
    if (d < -rank || d >= rank)
      throw Error(cat("Dimension out of range (expected to be in range of [", -rank, ", ", rank - 1, "], but got ", d,
                      ") for input of size ", to_string(input.shape())));
    return d < 0 ? d + rank : d;
  };
  const int64_t start = wrap(start_dim), end = wrap(end_dim);
  if (start > end)
    throw Error(cat("flatten() has invalid args: start_dim cannot come after end_dim (start_dim=", start_dim,
                    ", end_dim=", end_dim, ", input of size ", to_string(input.shape()), ")"));
  if (input.dim() == 0) return input.reshape({1});
  Shape shape(input.shape().begin(), input.shape().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= input.size(d);
  shape.push_back(merged);
  shape.insert(shape.end(), input.shape().begin() + end + 1, input.shape().end());
  return input.reshape(shape);
}

}  // namespace minidl
