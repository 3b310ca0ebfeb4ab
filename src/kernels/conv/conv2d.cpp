#include "kernels/conv/conv2d.hpp"

#include <algorithm>
#include <vector>

#include "kernels/conv/scratch.hpp"
#include "kernels/gemm.hpp"
#include "kernels/parallel_for.hpp"

namespace minidl::kernels {

int64_t Conv2dGeometry::chunk() const {
  constexpr int64_t kColumnFloats = int64_t(1) << 20;  // 4 MB of columns: L2-sized on most CPUs
  const int64_t per_image = std::max<int64_t>(1, in_channels * kernel_h * kernel_w * positions());
  return std::clamp<int64_t>(kColumnFloats / per_image, 1, std::max<int64_t>(1, batch));
}

namespace {

// Along one axis, for each kernel tap t: the outputs [first, last) whose input position
// o * stride + shift (shift = t * dilation - pad) lies inside the image; the others read
// padding. Computed once a call, so the loops over rows and columns run without bounds checks
// (a plain copy at stride 1): on the digits' 4x4 and 8x8 images the checks cost more than
// the copying.
struct Tap {
  int64_t first, last, shift;
};

std::vector<Tap> taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  const auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  std::vector<Tap> result(static_cast<size_t>(kernel));
  for (int64_t t = 0; t < kernel; ++t) {
    const int64_t shift = t * dilation - pad;
    const int64_t first = std::clamp<int64_t>(ceil_div(-shift, stride), 0, out);
    const int64_t last = std::clamp<int64_t>(ceil_div(in - shift, stride), first, out);
    result[size_t(t)] = {first, last, shift};
  }
  return result;
}

struct Taps {
  std::vector<Tap> rows, cols;
  explicit Taps(const Conv2dGeometry& g)
      : rows(taps(g.in_h, g.out_h(), g.kernel_h, g.stride_h, g.pad_h, g.dilation_h)),
        cols(taps(g.in_w, g.out_w(), g.kernel_w, g.stride_w, g.pad_w, g.dilation_w)) {}
};

}  // namespace

void im2col_rows(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols) {
  const int64_t oh = g.out_h(), ow = g.out_w(), l = oh * ow, kk = g.kernel_h * g.kernel_w;
  const int64_t width = count * l, in_w = g.in_w, sh = g.stride_h, sw = g.stride_w;  // width: columns of cols
  const Taps t(g);
  parallel_for(count * g.in_channels, grain_for(kk * l), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    const float* plane = x + ((first + b) * g.in_channels + c) * g.in_h * in_w;  // (H, W)
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      const Tap ty = t.rows[size_t(ki)];
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        const Tap tx = t.cols[size_t(kj)];
        float* row = cols + (c * kk + ki * g.kernel_w + kj) * width + b * l;  // (OH, OW) of this image
        std::fill(row, row + ty.first * ow, 0.0f);                            // rows in the top padding
        for (int64_t oy = ty.first; oy < ty.last; ++oy) {
          const float* in = plane + (oy * sh + ty.shift) * in_w;  // column ox reads in[ox * stride + shift]
          float* out = row + oy * ow;
          std::fill(out, out + tx.first, 0.0f);
          if (sw == 1) std::copy(in + tx.first + tx.shift, in + tx.last + tx.shift, out + tx.first);
          else
            for (int64_t ox = tx.first; ox < tx.last; ++ox) out[ox] = in[ox * sw + tx.shift];
          std::fill(out + tx.last, out + ow, 0.0f);
        }
        std::fill(row + ty.last * ow, row + l, 0.0f);  // rows in the bottom padding
      }
    }
  });
}

void col2im_rows(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx) {
  const int64_t oh = g.out_h(), ow = g.out_w(), l = oh * ow, kk = g.kernel_h * g.kernel_w;
  const int64_t width = count * l, in_w = g.in_w, sh = g.stride_h, sw = g.stride_w;
  const Taps t(g);
  // Each (image, channel) plane is written by one iteration only: no two threads add into it.
  parallel_for(count * g.in_channels, grain_for(kk * l), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    float* plane = dx + ((first + b) * g.in_channels + c) * g.in_h * in_w;  // (H, W)
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      const Tap ty = t.rows[size_t(ki)];
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        const Tap tx = t.cols[size_t(kj)];
        const float* row = cols + (c * kk + ki * g.kernel_w + kj) * width + b * l;
        for (int64_t oy = ty.first; oy < ty.last; ++oy) {
          float* in = plane + (oy * sh + ty.shift) * in_w;
          const float* from = row + oy * ow;
          for (int64_t ox = tx.first; ox < tx.last; ++ox) in[ox * sw + tx.shift] += from[ox];
        }
      }
    }
  });
}

namespace {

// The gather path's view of one image plane zero-padded to (HP, WP): the output position
// l = (oy, ox) under kernel tap (ki, kj) reads padded[tap_offset(ki, kj) + position[l]]
// with no bounds check, since the padding is in the plane.
struct PaddedPlane {
  int64_t hp, wp;
  std::vector<int64_t> position;  // (L): oy * stride_h * WP + ox * stride_w
  explicit PaddedPlane(const Conv2dGeometry& g)
      : hp(g.in_h + 2 * g.pad_h), wp(g.in_w + 2 * g.pad_w), position(size_t(g.positions())) {
    const int64_t ow = g.out_w();
    for (int64_t l = 0; l < g.positions(); ++l) position[size_t(l)] = l / ow * g.stride_h * wp + l % ow * g.stride_w;
  }
  int64_t tap_offset(const Conv2dGeometry& g, int64_t ki, int64_t kj) const {
    return ki * g.dilation_h * wp + kj * g.dilation_w;
  }
};

// Copies one (H, W) plane into the middle of a zeroed (HP, WP) one.
void pad_plane(const Conv2dGeometry& g, const PaddedPlane& p, const float* plane, float* padded) {
  std::fill_n(padded, p.hp * p.wp, 0.0f);
  for (int64_t y = 0; y < g.in_h; ++y) std::copy_n(plane + y * g.in_w, g.in_w, padded + (y + g.pad_h) * p.wp + g.pad_w);
}

// One tap's (OH, OW) outputs of one image: gathered from the padded plane into the tap's
// row of columns, or (Scatter) that row added back into the plane. Each output row reads OW
// padded values S apart; rows of 4 or 8 at stride 1 or 2 (the digits' images) are moved at a
// width and stride known at compile time, as vectors; every other geometry goes through the
// table.
template <int64_t W, int64_t S, bool Scatter>
void move_runs(const float* __restrict from, int64_t step, int64_t rows, float* __restrict to) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < W; ++i)
      if constexpr (Scatter) to[r * step + i * S] += from[r * W + i];
      else to[r * W + i] = from[r * step + i * S];
}

// The runs' (width, stride) pair as one number for a switch; 0 for the table.
int64_t run_kind(const Conv2dGeometry& g) {
  const int64_t ow = g.out_w();
  return (ow == 4 || ow == 8) && (g.stride_w == 1 || g.stride_w == 2) ? ow * 10 + g.stride_w : 0;
}

// Gather: from the padded plane at the tap's offset into its row; Scatter: from the row into the plane.
template <bool Scatter>
void move_tap(const Conv2dGeometry& g, const PaddedPlane& p, const float* from, float* to) {
  const int64_t step = g.stride_h * p.wp, oh = g.out_h();
  switch (run_kind(g)) {
    case 41:
      return move_runs<4, 1, Scatter>(from, step, oh, to);
    case 42:
      return move_runs<4, 2, Scatter>(from, step, oh, to);
    case 81:
      return move_runs<8, 1, Scatter>(from, step, oh, to);
    case 82:
      return move_runs<8, 2, Scatter>(from, step, oh, to);
    default:
      break;
  }
  const int64_t* position = p.position.data();
  for (int64_t i = 0; i < g.positions(); ++i)
    if constexpr (Scatter) to[position[i]] += from[i];
    else to[i] = from[position[i]];
}

}  // namespace

bool im2col_gathers(const Conv2dGeometry& g) {
  return g.out_w() < kGatherBelowWidth && (g.in_h + 2 * g.pad_h) * (g.in_w + 2 * g.pad_w) <= kGatherPlaneFloats;
}

void im2col_gather(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols) {
  const int64_t l = g.positions(), kk = g.kernel_h * g.kernel_w, width = count * l;
  const PaddedPlane p(g);
  parallel_for(count * g.in_channels, grain_for(kk * l), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    float padded[kGatherPlaneFloats];  // (HP, WP)
    pad_plane(g, p, x + ((first + b) * g.in_channels + c) * g.in_h * g.in_w, padded);
    for (int64_t ki = 0; ki < g.kernel_h; ++ki)
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        float* row = cols + (c * kk + ki * g.kernel_w + kj) * width + b * l;  // (L) of this image
        move_tap<false>(g, p, padded + p.tap_offset(g, ki, kj), row);
      }
  });
}

void col2im_gather(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx) {
  const int64_t l = g.positions(), kk = g.kernel_h * g.kernel_w, width = count * l;
  const PaddedPlane p(g);
  // Each (image, channel) plane is written by one iteration only: no two threads add into it.
  parallel_for(count * g.in_channels, grain_for(kk * l), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    float padded[kGatherPlaneFloats];  // (HP, WP): the sums, padding included, which is dropped
    std::fill_n(padded, p.hp * p.wp, 0.0f);
    // Column taps outermost: the taps of one kj add at the same alignment, so a vector add
    // reads back what the previous tap stored whole (a read straddling two recent stores
    // cannot be forwarded from them and waits).
    for (int64_t kj = 0; kj < g.kernel_w; ++kj)
      for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
        const float* row = cols + (c * kk + ki * g.kernel_w + kj) * width + b * l;
        move_tap<true>(g, p, row, padded + p.tap_offset(g, ki, kj));
      }
    float* plane = dx + ((first + b) * g.in_channels + c) * g.in_h * g.in_w;  // (H, W)
    for (int64_t y = 0; y < g.in_h; ++y) {
      const float* from = padded + (y + g.pad_h) * p.wp + g.pad_w;
      float* to = plane + y * g.in_w;
      for (int64_t x = 0; x < g.in_w; ++x) to[x] += from[x];
    }
  });
}

void im2col(const Conv2dGeometry& g, const float* x, int64_t first, int64_t count, float* cols) {
  if (im2col_gathers(g)) im2col_gather(g, x, first, count, cols);
  else im2col_rows(g, x, first, count, cols);
}

void col2im(const Conv2dGeometry& g, const float* cols, int64_t first, int64_t count, float* dx) {
  if (im2col_gathers(g)) col2im_gather(g, cols, first, count, dx);
  else col2im_rows(g, cols, first, count, dx);
}

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias, float* out,
                    float* saved_cols) {
  const int64_t l = g.positions(), k = g.patch(), cout_g = g.out_channels / g.groups, chunk = g.chunk();
  float* cols = saved_cols != nullptr  // (Cin*KH*KW, chunk*L)
                    ? saved_cols
                    : conv_scratch(ConvSlot::Columns, g.in_channels * g.kernel_h * g.kernel_w * chunk * l);
  float* product = conv_scratch(ConvSlot::Product, chunk > 1 ? g.out_channels * chunk * l : 0);  // (Cout, chunk*L)
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t count = std::min(chunk, g.batch - first), width = count * l;
    im2col(g, x, first, count, cols);
    // One image: the product (Cout, L) is the output image itself, started at the bias.
    float* target = count == 1 ? out + first * g.out_channels * l : product;
    const float beta = count == 1 && bias != nullptr ? 1.0f : 0.0f;
    if (beta != 0.0f)
      for (int64_t co = 0; co < g.out_channels; ++co) std::fill_n(target + co * l, l, bias[co]);
    for (int64_t gi = 0; gi < g.groups; ++gi)
      gemm(false, false, cout_g, width, k, 1.0f, weight + gi * cout_g * k, cols + gi * k * width, beta,
           target + gi * cout_g * width);
    if (count == 1) continue;
    // (Cout, count, L) -> (count, Cout, L), adding the bias.
    parallel_for(count * g.out_channels, grain_for(l), [&](int64_t bo) {
      const int64_t b = bo / g.out_channels, co = bo % g.out_channels;
      const float add = bias != nullptr ? bias[co] : 0.0f;
      const float* from = product + co * width + b * l;
      float* to = out + ((first + b) * g.out_channels + co) * l;
      for (int64_t i = 0; i < l; ++i) to[i] = from[i] + add;
    });
  }
}

double plane_sum(const float* values, int64_t n) {
  // A chain of dependent adds waits out each add's latency; kLanes independent sums, each
  // value to the lane of its index mod kLanes whatever the vector width, vectorize instead
  // and give the same bits on every instruction set.
  constexpr int64_t kLanes = 16;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += double(values[i + j]);
  double s = 0.0;
  for (int64_t j = 0; j < kLanes; ++j) s += lanes[j];
  for (; i < n; ++i) s += double(values[i]);
  return s;
}

void conv2d_bias_gradient(const Conv2dGeometry& g, const float* dout, float* dbias) {
  const int64_t l = g.positions();
  for (int64_t co = 0; co < g.out_channels; ++co) {
    double sum = 0.0;  // over images and positions, in a fixed order
    for (int64_t b = 0; b < g.batch; ++b) sum += plane_sum(dout + (b * g.out_channels + co) * l, l);
    dbias[co] = float(sum);
  }
}

void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                     float* dweight, float* dbias, const float* saved_cols) {
  const int64_t l = g.positions(), k = g.patch(), cout_g = g.out_channels / g.groups, chunk = g.chunk();
  const int64_t rows = g.in_channels * g.kernel_h * g.kernel_w;
  float* cols = conv_scratch(ConvSlot::Columns, rows * chunk * l);  // (Cin*KH*KW, chunk*L)
  float* gathered = conv_scratch(ConvSlot::Product, chunk > 1 ? g.out_channels * chunk * l : 0);  // (Cout, chunk*L)
  if (dbias != nullptr) conv2d_bias_gradient(g, dout, dbias);
  if (dx != nullptr) std::fill_n(dx, g.batch * g.in_channels * g.in_h * g.in_w, 0.0f);
  if (dweight != nullptr && g.batch == 0) std::fill_n(dweight, g.weight_numel(), 0.0f);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t count = std::min(chunk, g.batch - first), width = count * l;
    const float* dy = dout + first * g.out_channels * l;  // (Cout, L) when count == 1
    if (count > 1) {                                      // (count, Cout, L) -> (Cout, count, L), the product's layout
      parallel_for(count * g.out_channels, grain_for(l), [&](int64_t bo) {
        const int64_t b = bo / g.out_channels, co = bo % g.out_channels;
        std::copy_n(dy + (b * g.out_channels + co) * l, l, gathered + co * width + b * l);
      });
      dy = gathered;
    }
    if (dweight != nullptr) {              // dW_g (Cout/G, K) += dY_g (Cout/G, width) cols_g^T (width, K)
      const float* unrolled = saved_cols;  // the forward's columns when it kept them (one chunk)
      if (unrolled == nullptr) {
        im2col(g, x, first, count, cols);
        unrolled = cols;
      }
      for (int64_t gi = 0; gi < g.groups; ++gi)
        gemm(false, true, cout_g, k, width, 1.0f, dy + gi * cout_g * width, unrolled + gi * k * width,
             first == 0 ? 0.0f : 1.0f, dweight + gi * cout_g * k);
    }
    if (dx != nullptr) {  // dcols_g (K, width) = W_g^T (K, Cout/G) dY_g (Cout/G, width), then col2im
      for (int64_t gi = 0; gi < g.groups; ++gi)
        gemm(true, false, k, width, cout_g, 1.0f, weight + gi * cout_g * k, dy + gi * cout_g * width, 0.0f,
             cols + gi * k * width);
      col2im(g, cols, first, count, dx);
    }
  }
}

namespace {

// Calls f(input index, weight index, output index) for every term of the convolution sum.
template <typename F>
void for_each_term(const Conv2dGeometry& g, F&& f) {
  const int64_t oh = g.out_h(), ow = g.out_w(), cin_g = g.in_channels / g.groups;
  const int64_t cout_g = g.out_channels / g.groups;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t o = ((b * g.out_channels + co) * oh + oy) * ow + ox;
          for (int64_t cg = 0; cg < cin_g; ++cg) {
            const int64_t ci = co / cout_g * cin_g + cg;
            for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
              const int64_t iy = oy * g.stride_h - g.pad_h + ki * g.dilation_h;  // the input row tap ki reads
              if (iy < 0 || iy >= g.in_h) continue;
              for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
                const int64_t ix = ox * g.stride_w - g.pad_w + kj * g.dilation_w;
                if (ix < 0 || ix >= g.in_w) continue;
                f(((b * g.in_channels + ci) * g.in_h + iy) * g.in_w + ix,
                  ((co * cin_g + cg) * g.kernel_h + ki) * g.kernel_w + kj, o);
              }
            }
          }
        }
}

}  // namespace

void conv2d_forward_direct(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias,
                           float* out) {
  const int64_t l = g.positions(), n_out = g.batch * g.out_channels * l;
  std::vector<double> sums(size_t(n_out), 0.0);
  for_each_term(g, [&](int64_t i, int64_t w, int64_t o) { sums[size_t(o)] += double(x[i]) * double(weight[w]); });
  for (int64_t o = 0; o < n_out; ++o)
    out[o] = float(sums[size_t(o)] + (bias != nullptr ? double(bias[o / l % g.out_channels]) : 0.0));
}

void conv2d_backward_direct(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                            float* dweight, float* dbias) {
  const int64_t l = g.positions(), n_in = g.batch * g.in_channels * g.in_h * g.in_w;
  std::vector<double> gx(size_t(n_in), 0.0), gw(size_t(g.weight_numel()), 0.0), gb(size_t(g.out_channels), 0.0);
  for_each_term(g, [&](int64_t i, int64_t w, int64_t o) {
    gx[size_t(i)] += double(weight[w]) * double(dout[o]);
    gw[size_t(w)] += double(x[i]) * double(dout[o]);
  });
  for (int64_t o = 0; o < g.batch * g.out_channels * l; ++o) gb[size_t(o / l % g.out_channels)] += dout[o];
  if (dx != nullptr) std::transform(gx.begin(), gx.end(), dx, [](double v) { return float(v); });
  if (dweight != nullptr) std::transform(gw.begin(), gw.end(), dweight, [](double v) { return float(v); });
  if (dbias != nullptr) std::transform(gb.begin(), gb.end(), dbias, [](double v) { return float(v); });
}

}  // namespace minidl::kernels
