#pragma once
// Conv2d's kernels on raw buffers: im2col + sgemm (the fast path) and a direct loop (the
// reference and, for tiny images, a candidate: bench/bench_conv.cpp measures both).
//
// A batch of images is cut into chunks of `chunk` images; each chunk is unrolled into one
// column matrix cols (C * KH * KW, chunk * OH * OW), so one sgemm per group multiplies the
// whole chunk: W_g (Cout/G, Cin/G * KH * KW) x cols_g. On the digits' 8x8 images the whole
// batch fits one chunk (one sgemm of 64 x 64 columns instead of 64 tiny ones); on large
// images a chunk is one image and the product is written straight into the output.
#include <cstdint>

namespace minidl::kernels {

/// The sizes of one convolution; out_h / out_w follow PyTorch's floor formula.
struct Conv2dGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;

  int64_t out_h() const { return (in_h + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (in_w + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1; }
  int64_t positions() const { return out_h() * out_w(); }                       // L
  int64_t patch() const { return in_channels / groups * kernel_h * kernel_w; }  // K of one group
  int64_t weight_numel() const { return out_channels * patch(); }               // (Cout, Cin/G, KH, KW)
  /// Images per chunk: as many as keep the column matrix under about 4 MB, at least one.
  int64_t chunk() const;
};

// x (N, Cin, H, W), weight (Cout, Cin/G, KH, KW), bias (Cout) or null, out (N, Cout, OH, OW).
/// saved_cols, when given, receives the column matrix (Cin * KH * KW, N * L) for the
/// backward to reuse; only when the whole batch is one chunk (chunk() >= batch).
void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias, float* out,
                    float* saved_cols = nullptr);
/// Gradients of sum(out * dout); each may be null (not wanted). dx is overwritten, dweight
/// and dbias are overwritten too (not accumulated into). saved_cols: the forward's columns,
/// which spare the weight gradient its im2col (x is then not read).
void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                     float* dweight, float* dbias, const float* saved_cols = nullptr);

/// db (Cout): dout (N, Cout, OH, OW) summed over images and positions, in double: for each
/// channel, plane_sum of each image's plane added in image order.
void conv2d_bias_gradient(const Conv2dGeometry& g, const float* dout, float* dbias);
/// values[0, n) summed in double, in an order fixed by n alone (16 interleaved partial sums).
double plane_sum(const float* values, int64_t n);

/// The same as plain loops (sums in double): the reference the fast path is tested against.
void conv2d_forward_direct(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias, float* out);
void conv2d_backward_direct(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                            float* dweight, float* dbias);

/// Unrolls images [first, first + count) of x into cols (Cin * KH * KW, count * L); zero
/// where the patch hangs over the padding.
void im2col(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols);
/// The adjoint: adds cols (Cin * KH * KW, count * L) back into images [first, first + count)
/// of dx, which the caller has zeroed.
void col2im(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx);

// im2col and col2im each have two paths, the same sums (tests hold them together):
//   rows:   copies each output row's run of inputs, with the padding's bounds worked out once
//           a tap; pays per row, so it suits wide images (the 32x32 layer: rows of 32);
//   gather: pads each plane into a stack buffer, then reads every column through one table
//           of offsets, no bounds and no per-row calls; on the digits' 8x8 and 4x4 images,
//           rows of 4 to 8 values, the rows path spent more on bookkeeping than on copying.
constexpr int64_t kGatherBelowWidth = 16;     // output widths below this gather
constexpr int64_t kGatherPlaneFloats = 4096;  // and only padded planes that fit the stack buffer
/// Whether im2col / col2im take the gather path for g.
bool im2col_gathers(const Conv2dGeometry& g);
void im2col_rows(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols);
void im2col_gather(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols);
void col2im_rows(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx);
void col2im_gather(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx);

}  // namespace minidl::kernels
