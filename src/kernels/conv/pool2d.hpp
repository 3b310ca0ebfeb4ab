#pragma once
// Pooling kernels on raw buffers: every (image, channel) plane is pooled on its own, so the
// loops split over planes and no two threads write the same element.
#include <cstdint>

namespace minidl::kernels {

/// planes = N * C images of (in_h, in_w); window kernel x kernel every stride, zero or -inf
/// padding of pad on each side, dilation (max pooling only).
struct Pool2dGeometry {
  int64_t planes, in_h, in_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;

  /// PyTorch's floor((in + 2 pad - dilation (kernel - 1) - 1) / stride) + 1; 0 when the
  /// dilated kernel overhangs the padded input.
  int64_t out_h() const { return out_size(in_h, kernel_h, stride_h, pad_h, dilation_h); }
  int64_t out_w() const { return out_size(in_w, kernel_w, stride_w, pad_w, dilation_w); }

 private:
  static int64_t out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
    const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
  }
};

// x (planes, H, W) -> out (planes, OH, OW); argmax (planes, OH, OW) holds the flat index in
// its plane (h * W + w) of each maximum, the first on ties, a NaN wins (as PyTorch).
void max_pool2d_forward(const Pool2dGeometry& g, const float* x, float* out, int64_t* argmax);
/// dx (planes, H, W) = the scatter of dout into the saved argmax positions (overwritten).
void max_pool2d_backward(const Pool2dGeometry& g, const float* dout, const int64_t* argmax, float* dx);

/// Means over each window; count_include_pad divides by the whole window (padding counted
/// as zeros), else by the window's part inside the image.
void avg_pool2d_forward(const Pool2dGeometry& g, bool count_include_pad, const float* x, float* out);
void avg_pool2d_backward(const Pool2dGeometry& g, bool count_include_pad, const float* dout, float* dx);

/// PyTorch's adaptive windows: output row i averages rows [floor(i H / OH), ceil((i + 1) H / OH)).
void adaptive_avg_pool2d_forward(int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                                 const float* x, float* out);
void adaptive_avg_pool2d_backward(int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                                  const float* dout, float* dx);

}  // namespace minidl::kernels
