#include "kernels/conv/pool2d.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/parallel_for.hpp"

namespace minidl::kernels {

void max_pool2d_forward(const Pool2dGeometry& g, const float* x, float* out, int64_t* argmax) {
  const int64_t oh = g.out_h(), ow = g.out_w(), hw = g.in_h * g.in_w;
  parallel_for(g.planes, grain_for(oh * ow * g.kernel_h * g.kernel_w), [&](int64_t p) {
    const float* in = x + p * hw;  // (H, W)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_at = -1;
        for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
          const int64_t iy = oy * g.stride_h - g.pad_h + ki * g.dilation_h;
          if (iy < 0 || iy >= g.in_h) continue;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const int64_t ix = ox * g.stride_w - g.pad_w + kj * g.dilation_w;
            if (ix < 0 || ix >= g.in_w) continue;
            const float v = in[iy * g.in_w + ix];
            if (best_at < 0 || v > best || std::isnan(v)) {
              best = v;
              best_at = iy * g.in_w + ix;
            }
            if (std::isnan(best)) break;
          }
          if (std::isnan(best)) break;
        }
        const int64_t o = (p * oh + oy) * ow + ox;
        out[o] = best;
        argmax[o] = best_at;
      }
  });
}

void max_pool2d_backward(const Pool2dGeometry& g, const float* dout, const int64_t* argmax, float* dx) {
  const int64_t l = g.out_h() * g.out_w(), hw = g.in_h * g.in_w;
  parallel_for(g.planes, grain_for(l + hw), [&](int64_t p) {
    float* plane = dx + p * hw;
    std::fill_n(plane, hw, 0.0f);
    for (int64_t o = p * l; o < (p + 1) * l; ++o) plane[argmax[o]] += dout[o];
  });
}

namespace {

// The window of output (oy, ox) clipped to the image, and the count its mean divides by.
struct Window {
  int64_t y0, y1, x0, x1, divisor;
};

Window avg_window(const Pool2dGeometry& g, bool count_include_pad, int64_t oy, int64_t ox) {
  int64_t y0 = oy * g.stride_h - g.pad_h, x0 = ox * g.stride_w - g.pad_w;
  int64_t y1 = std::min(y0 + g.kernel_h, g.in_h + g.pad_h), x1 = std::min(x0 + g.kernel_w, g.in_w + g.pad_w);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.in_h), x1 = std::min(x1, g.in_w);
  return {y0, y1, x0, x1, count_include_pad ? padded : (y1 - y0) * (x1 - x0)};
}

}  // namespace

void avg_pool2d_forward(const Pool2dGeometry& g, bool count_include_pad, const float* x, float* out) {
  const int64_t oh = g.out_h(), ow = g.out_w(), hw = g.in_h * g.in_w;
  parallel_for(g.planes, grain_for(oh * ow * g.kernel_h * g.kernel_w), [&](int64_t p) {
    const float* in = x + p * hw;
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        const Window w = avg_window(g, count_include_pad, oy, ox);
        float sum = 0.0f;
        for (int64_t iy = w.y0; iy < w.y1; ++iy)
          for (int64_t ix = w.x0; ix < w.x1; ++ix) sum += in[iy * g.in_w + ix];
        out[(p * oh + oy) * ow + ox] = sum / float(w.divisor);
      }
  });
}

void avg_pool2d_backward(const Pool2dGeometry& g, bool count_include_pad, const float* dout, float* dx) {
  const int64_t oh = g.out_h(), ow = g.out_w(), hw = g.in_h * g.in_w;
  parallel_for(g.planes, grain_for(oh * ow * g.kernel_h * g.kernel_w + hw), [&](int64_t p) {
    float* plane = dx + p * hw;
    std::fill_n(plane, hw, 0.0f);
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        const Window w = avg_window(g, count_include_pad, oy, ox);
        const float share = dout[(p * oh + oy) * ow + ox] / float(w.divisor);
        for (int64_t iy = w.y0; iy < w.y1; ++iy)
          for (int64_t ix = w.x0; ix < w.x1; ++ix) plane[iy * g.in_w + ix] += share;
      }
  });
}

namespace {
inline int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
inline int64_t adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }
}  // namespace

void adaptive_avg_pool2d_forward(int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                                 const float* x, float* out) {
  parallel_for(planes, grain_for(in_h * in_w), [&](int64_t p) {
    const float* in = x + p * in_h * in_w;
    for (int64_t oy = 0; oy < out_h; ++oy)
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t y0 = adaptive_start(oy, in_h, out_h), y1 = adaptive_end(oy, in_h, out_h);
        const int64_t x0 = adaptive_start(ox, in_w, out_w), x1 = adaptive_end(ox, in_w, out_w);
        float sum = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += in[iy * in_w + ix];
        out[(p * out_h + oy) * out_w + ox] = sum / float((y1 - y0) * (x1 - x0));
      }
  });
}

void adaptive_avg_pool2d_backward(int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                                  const float* dout, float* dx) {
  parallel_for(planes, grain_for(in_h * in_w), [&](int64_t p) {
    float* plane = dx + p * in_h * in_w;
    std::fill_n(plane, in_h * in_w, 0.0f);
    for (int64_t oy = 0; oy < out_h; ++oy)
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t y0 = adaptive_start(oy, in_h, out_h), y1 = adaptive_end(oy, in_h, out_h);
        const int64_t x0 = adaptive_start(ox, in_w, out_w), x1 = adaptive_end(ox, in_w, out_w);
        const float share = dout[(p * out_h + oy) * out_w + ox] / float((y1 - y0) * (x1 - x0));
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) plane[iy * in_w + ix] += share;
      }
  });
}

}  // namespace minidl::kernels
