#include "kernels/conv/winograd.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/conv/scratch.hpp"
#include "kernels/gemm.hpp"
#include "kernels/parallel_for.hpp"

namespace minidl::kernels {

namespace {

constexpr int64_t kPoints = 16;  // the 4x4 transformed positions, e = 4 i + j

// The output's 2x2 tiles; the last row / column of tiles is partial when OH / OW is odd.
struct TileGrid {
  int64_t oh, ow, th, tw;
  explicit TileGrid(const Conv2dGeometry& g) : oh(g.out_h()), ow(g.out_w()), th((oh + 1) / 2), tw((ow + 1) / 2) {}
  int64_t per_image() const { return th * tw; }
};

// The distance between the 16 matrices (channels, T) of V, M, dM or dV: their size, rounded
// up to a cache line and one line more. Their sizes are often multiples of 4 KB (64 x 1024
// floats): 16 streams written or read at once that many bytes apart all fall in the same
// cache sets, and the transforms took as long as the products.
int64_t point_stride(int64_t channels, int64_t tiles) { return (channels * tiles + 15) / 16 * 16 + 16; }

// A loop iteration's buffer for one plane, on whichever thread runs it, kept across calls.
float* plane_buffer(int64_t count) {
  thread_local std::vector<float> buffer;
  return aligned(buffer, count);
}

// Asks for a plane's count floats to be brought into the caches. The passes read one 4 KB
// plane of x or dY an iteration, from L3 or memory: the hardware's prefetcher stops at each
// page's end, so the next plane's first lines missed every time; named one plane ahead they
// arrive while this one is transformed.
void prefetch_plane(const float* plane, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) __builtin_prefetch(plane + i);
}
// The same for a plane about to be written (out, dx): its lines owned before the stores.
void prefetch_plane_for_writing(float* plane, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) __builtin_prefetch(plane + i, 1);
}

// The split layout of a plane: each row as its even columns, then its odd columns, `half`
// values each. A tile at column 2 tx reads even[tx], odd[tx], even[tx + 1], odd[tx + 1]: four
// contiguous runs over tx, so every transform below is a loop of vector adds.
//
// SplitRun: where a row's columns 0, 2, 4, ... and 1, 3, 5, ... go in the split layout when the row is
// padded by pad on the left: padded column x + pad is even or odd by pad's parity.
struct SplitRun {
  int64_t first, second;  // offsets from the row's start (its even half) of columns 0 and 1
  SplitRun(int64_t pad, int64_t half)
      : first(pad % 2 == 0 ? pad / 2 : half + pad / 2), second(pad % 2 == 0 ? half + pad / 2 : (pad + 1) / 2) {}
};

//
// split_plane writes the plane's values only: the same positions for the same sizes, so the
// padding's zeros, written once a geometry (split_buffer), stay.
void split_plane(const float* __restrict plane, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w, int64_t half,
                 float* __restrict split) {
  const SplitRun run(pad_w, half);
  for (int64_t y = 0; y < h; ++y) {
    const float* __restrict in = plane + y * w;
    float* __restrict first = split + (y + pad_h) * 2 * half + run.first;
    float* __restrict second = split + (y + pad_h) * 2 * half + run.second;
    for (int64_t k = 0; k < w / 2; ++k) {  // a deinterleave: two vector loads, two permutes
      first[k] = in[2 * k];
      second[k] = in[2 * k + 1];
    }
    if (w % 2 == 1) first[w / 2] = in[w - 1];
  }
}

// This thread's split plane, (rows, 2 half), for g's inputs: zeroed when it last held another
// geometry's, otherwise as split_plane left it, zeros in the padding.
float* split_buffer(const Conv2dGeometry& g, int64_t rows, int64_t half) {
  thread_local std::vector<float> buffer;
  thread_local std::array<int64_t, 6> laid_out{};  // the sizes its zeros are for
  const std::array<int64_t, 6> sizes{rows, half, g.in_h, g.in_w, g.pad_h, g.pad_w};
  float* split = aligned(buffer, rows * 2 * half);
  if (sizes != laid_out) {
    std::fill_n(split, rows * 2 * half, 0.0f);
    laid_out = sizes;
  }
  return split;
}

// U_e (Cout, Cin) = (G g G^T)_e for every (co, ci) pair: u (16, Cout, Cin), with
// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void transform_weights(const Conv2dGeometry& g, const float* weight, float* u) {
  const int64_t pairs = g.out_channels * g.in_channels;
  for (int64_t p = 0; p < pairs; ++p) {
    const float* k = weight + p * 9;  // (3, 3)
    float t[4][3];                    // G g
    for (int64_t j = 0; j < 3; ++j) {
      t[0][j] = k[j];
      t[1][j] = 0.5f * (k[j] + k[3 + j] + k[6 + j]);
      t[2][j] = 0.5f * (k[j] - k[3 + j] + k[6 + j]);
      t[3][j] = k[6 + j];
    }
    for (int64_t i = 0; i < 4; ++i) {  // (G g) G^T
      const float* r = t[i];
      u[(i * 4 + 0) * pairs + p] = r[0];
      u[(i * 4 + 1) * pairs + p] = 0.5f * (r[0] + r[1] + r[2]);
      u[(i * 4 + 2) * pairs + p] = 0.5f * (r[0] - r[1] + r[2]);
      u[(i * 4 + 3) * pairs + p] = r[2];
    }
  }
}

// The adjoint of transform_weights: dg = G^T dU G for every pair, du (16, Cout, Cin) into
// dweight (Cout, Cin, 3, 3).
void untransform_weight_grads(const Conv2dGeometry& g, const float* du, float* dweight) {
  const int64_t pairs = g.out_channels * g.in_channels;
  for (int64_t p = 0; p < pairs; ++p) {
    float t[3][4];  // G^T dU
    for (int64_t j = 0; j < 4; ++j) {
      const float d0 = du[j * pairs + p], d1 = du[(4 + j) * pairs + p];
      const float d2 = du[(8 + j) * pairs + p], d3 = du[(12 + j) * pairs + p];
      t[0][j] = d0 + 0.5f * (d1 + d2);
      t[1][j] = 0.5f * (d1 - d2);
      t[2][j] = 0.5f * (d1 + d2) + d3;
    }
    float* k = dweight + p * 9;
    for (int64_t i = 0; i < 3; ++i) {  // (G^T dU) G
      const float* r = t[i];
      k[i * 3 + 0] = r[0] + 0.5f * (r[1] + r[2]);
      k[i * 3 + 1] = 0.5f * (r[1] - r[2]);
      k[i * 3 + 2] = 0.5f * (r[1] + r[2]) + r[3];
    }
  }
}

// One input plane's tiles (B^T d B)_e, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]:
// v points at V_0's row of this channel at the plane's first tile, V_e at v + e * stride.
// split: the padded plane, (2 TH + 2) rows of half = TW + 1. Both steps in one pass, reading
// only the split plane: an intermediate row written and read back one column over straddles
// two vector stores, which cannot be forwarded, and took twice as long.
void transform_input_plane(const TileGrid& t, const float* __restrict split, int64_t stride, float* __restrict v) {
  const int64_t half = t.tw + 1, row = 2 * half, n = t.tw;
  for (int64_t ty = 0; ty < t.th; ++ty) {
    const float* __restrict r = split + 2 * ty * row;  // the tile row's four input rows, `row` apart
    float* __restrict out = v + ty * n;
#pragma omp simd  // the 16 rows `stride` apart never overlap: vectorize over tx
    for (int64_t tx = 0; tx < n; ++tx) {
      float d[4][4];  // the tile: d[i][j] = row i, column 2 tx + j
      for (int64_t i = 0; i < 4; ++i) {
        d[i][0] = r[i * row + tx];
        d[i][1] = r[i * row + half + tx];
        d[i][2] = r[i * row + tx + 1];
        d[i][3] = r[i * row + half + tx + 1];
      }
      float w[4][4];  // B^T d
      for (int64_t j = 0; j < 4; ++j) {
        w[0][j] = d[0][j] - d[2][j];
        w[1][j] = d[1][j] + d[2][j];
        w[2][j] = d[2][j] - d[1][j];
        w[3][j] = d[1][j] - d[3][j];
      }
      for (int64_t i = 0; i < 4; ++i) {  // (B^T d) B
        out[(i * 4 + 0) * stride + tx] = w[i][0] - w[i][2];
        out[(i * 4 + 1) * stride + tx] = w[i][1] + w[i][2];
        out[(i * 4 + 2) * stride + tx] = w[i][2] - w[i][1];
        out[(i * 4 + 3) * stride + tx] = w[i][1] - w[i][3];
      }
    }
  }
}

// One output plane from its tiles' products: Y = A^T m A + bias, A^T = [1 1 1 0; 0 1 -1 -1].
// m points at M_0's row of this channel at the plane's first tile; out is (OH, OW); pair:
// (2, 2 TW) scratch for a partial tile row or column. Both steps and the interleave of the
// tiles' two columns in one pass over tx, the tile's values in registers.
void transform_output_plane(const TileGrid& t, const float* __restrict m, int64_t stride, float bias,
                            float* __restrict out, float* __restrict pair) {
  const int64_t n = t.tw;
  for (int64_t ty = 0; ty < t.th; ++ty) {
    const int64_t rows = std::min<int64_t>(2, t.oh - 2 * ty);
    const bool direct = rows == 2 && t.ow == 2 * n;  // whole tiles: straight into out
    float* __restrict y0 = direct ? out + 2 * ty * t.ow : pair;
    float* __restrict y1 = direct ? y0 + t.ow : pair + 2 * n;
    const float* __restrict mt = m + ty * n;
#pragma omp simd  // the 16 rows `stride` apart are only read: vectorize over tx
    for (int64_t tx = 0; tx < n; ++tx) {
      float s[2][4];  // A^T m, along the rows
      for (int64_t j = 0; j < 4; ++j) {
        const float m0 = mt[j * stride + tx], m1 = mt[(4 + j) * stride + tx];
        const float m2 = mt[(8 + j) * stride + tx], m3 = mt[(12 + j) * stride + tx];
        s[0][j] = m0 + m1 + m2;
        s[1][j] = m1 - m2 - m3;
      }
      y0[2 * tx] = s[0][0] + s[0][1] + s[0][2] + bias;  // then along the columns
      y0[2 * tx + 1] = s[0][1] - s[0][2] - s[0][3] + bias;
      y1[2 * tx] = s[1][0] + s[1][1] + s[1][2] + bias;
      y1[2 * tx + 1] = s[1][1] - s[1][2] - s[1][3] + bias;
    }
    if (!direct)
      for (int64_t a = 0; a < rows; ++a) std::copy_n(pair + a * 2 * n, t.ow, out + (2 * ty + a) * t.ow);
  }
}

// The adjoint of transform_output_plane: dM = A dY A^T of each tile of one plane of dY.
// dy: the plane, 2 TH rows `pitch` apart of at least 2 TW values (a partial tile's missing
// outputs as zeros); dm as transform_output_plane's m. One pass over tx, as the forward's.
void transform_grad_plane(const TileGrid& t, const float* __restrict dy, int64_t pitch, int64_t stride,
                          float* __restrict dm) {
  const int64_t n = t.tw;
  for (int64_t ty = 0; ty < t.th; ++ty) {
    const float* __restrict y0 = dy + 2 * ty * pitch;
    const float* __restrict y1 = y0 + pitch;
    float* __restrict d = dm + ty * n;
#pragma omp simd  // the 16 rows `stride` apart never overlap: vectorize over tx
    for (int64_t tx = 0; tx < n; ++tx) {
      const float e0 = y0[2 * tx], o0 = y0[2 * tx + 1], e1 = y1[2 * tx], o1 = y1[2 * tx + 1];
      const float even[4] = {e0, e0 + e1, e0 - e1, -e1};  // A along the rows, the tile's two columns
      const float odd[4] = {o0, o0 + o1, o0 - o1, -o1};
      for (int64_t i = 0; i < 4; ++i) {  // then along the columns
        d[(i * 4 + 0) * stride + tx] = even[i];
        d[(i * 4 + 1) * stride + tx] = even[i] + odd[i];
        d[(i * 4 + 2) * stride + tx] = even[i] - odd[i];
        d[(i * 4 + 3) * stride + tx] = -odd[i];
      }
    }
  }
}

// The adjoint of transform_input_plane, B along the columns of tile row ty: q (4, 2 half),
// row i the tile row's B^T-transformed row i in the split layout (even columns, then odd).
// Each padded column gathers from its two tiles (even column k: position 0 of tile k and 2
// of tile k - 1) rather than adding into a row twice, one column apart.
void untransform_tile_row(const TileGrid& t, const float* __restrict dv, int64_t stride, int64_t ty,
                          float* __restrict q) {
  const int64_t half = t.tw + 1, row = 2 * half, n = t.tw;
  for (int64_t i = 0; i < 4; ++i) {
    const float* __restrict d0 = dv + (i * 4) * stride + ty * n;
    const float* __restrict d1 = d0 + stride;
    const float* __restrict d2 = d1 + stride;
    const float* __restrict d3 = d2 + stride;
    float* __restrict even = q + i * row;
    float* __restrict odd = even + half;
    even[0] = d0[0];
    odd[0] = d1[0] - d2[0] + d3[0];
    // Columns 1 to n, from tiles k and k + 1: n iterations, whole vectors where n - 1 would
    // leave a 16-lane loop scalar. Tile n's values are read (the row's next, or the gap after
    // the matrix, point_stride's extra line) and replaced by zeros.
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) {
      const bool inside = k + 1 < n;
      const float next0 = d0[k + 1], next_odd = d1[k + 1] - d2[k + 1] + d3[k + 1];
      even[k + 1] = (inside ? next0 : 0.0f) + (d1[k] + d2[k] - d0[k]);
      odd[k + 1] = (inside ? next_odd : 0.0f) - d3[k];
    }
  }
}

// B dV B^T of every tile of one plane, summed where tiles overlap (two rows and columns),
// the padded plane's interior written into dx (H, W). dv as transform_input_plane's v;
// q: (2, 4, 2 half) scratch. Padded rows 2 k and 2 k + 1 gather from tile rows k and k - 1
// (B's rows 0, 1 of the one, 2, 3 of the other), each value written once, straight into dx,
// interleaved back from the split layout: no padded plane to zero, add into and copy out.
void transform_input_grad_plane(const Conv2dGeometry& g, const TileGrid& t, const float* __restrict dv, int64_t stride,
                                float* __restrict dx, float* __restrict q) {
  const int64_t half = t.tw + 1, row = 2 * half, w = g.in_w;
  const SplitRun run(g.pad_w, half);
  float* prev = q;           // tile row k - 1's q, zeros above the first
  float* cur = q + 4 * row;  // tile row k's, zeros below the last
  std::fill_n(prev, 4 * row, 0.0f);
  for (int64_t k = 0; k <= t.th; ++k) {
    if (k < t.th) untransform_tile_row(t, dv, stride, k, cur);
    else std::fill_n(cur, 4 * row, 0.0f);
    for (int64_t r = 0; r < 2; ++r) {
      const int64_t y = 2 * k + r - g.pad_h;  // the padded row's row of dx
      if (y < 0 || y >= g.in_h) continue;
      // r = 0: (q1 + q2 - q0) of the tile above, q0 of this one; r = 1: q1 - q2 + q3 of this
      // one, -q3 of the one above.
      const float *p0 = prev, *p1 = prev + row, *p2 = prev + 2 * row, *p3 = prev + 3 * row;
      const float *c0 = cur, *c1 = cur + row, *c2 = cur + 2 * row, *c3 = cur + 3 * row;
      auto value = [&](int64_t c) {
        return r == 0 ? (p1[c] + p2[c] - p0[c]) + c0[c] : (c1[c] - c2[c] + c3[c]) - p3[c];
      };
      float* __restrict to = dx + y * w;
      const int64_t a = run.first, b = run.second;
      if (r == 0) {
#pragma omp simd
        for (int64_t j = 0; j < w / 2; ++j) {  // an interleave, split_plane's inverse
          to[2 * j] = (p1[a + j] + p2[a + j] - p0[a + j]) + c0[a + j];
          to[2 * j + 1] = (p1[b + j] + p2[b + j] - p0[b + j]) + c0[b + j];
        }
      } else {
#pragma omp simd
        for (int64_t j = 0; j < w / 2; ++j) {
          to[2 * j] = (c1[a + j] - c2[a + j] + c3[a + j]) - p3[a + j];
          to[2 * j + 1] = (c1[b + j] - c2[b + j] + c3[b + j]) - p3[b + j];
        }
      }
      if (w % 2 == 1) to[w - 1] = value(a + w / 2);
    }
    std::swap(prev, cur);
  }
}

// Each of the four passes over a chunk [first, first + count): one (image, channel) plane an
// iteration, on any thread; tiles of image b start at column b * per_image of each matrix.
void transform_inputs(const Conv2dGeometry& g, const TileGrid& t, const float* x, int64_t first, int64_t count,
                      float* v) {
  const int64_t tiles = count * t.per_image(), half = t.tw + 1, rows = 2 * t.th + 2, plane = g.in_h * g.in_w;
  parallel_for(count * g.in_channels, grain_for(kPoints * t.per_image()), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    if (bc + 1 < count * g.in_channels) prefetch_plane(x + ((first * g.in_channels) + bc + 1) * plane, plane);
    float* split = split_buffer(g, rows, half);
    split_plane(x + ((first + b) * g.in_channels + c) * g.in_h * g.in_w, g.in_h, g.in_w, g.pad_h, g.pad_w, half, split);
    transform_input_plane(t, split, point_stride(g.in_channels, tiles), v + c * tiles + b * t.per_image());
  });
}

void transform_outputs(const Conv2dGeometry& g, const TileGrid& t, const float* m, const float* bias, int64_t first,
                       int64_t count, float* out) {
  const int64_t tiles = count * t.per_image(), l = t.oh * t.ow;
  parallel_for(count * g.out_channels, grain_for(kPoints * t.per_image()), [&](int64_t bo) {
    const int64_t b = bo / g.out_channels, co = bo % g.out_channels;
    float* plane = out + ((first + b) * g.out_channels + co) * l;
    if (bo + 1 < count * g.out_channels) prefetch_plane_for_writing(plane + l, l);
    transform_output_plane(t, m + co * tiles + b * t.per_image(), point_stride(g.out_channels, tiles),
                           bias != nullptr ? bias[co] : 0.0f, plane, plane_buffer(4 * t.tw));
  });
}

// Also, when sums is given, each plane's plane_sum into sums (N, Cout) at (first + b, co),
// while the plane is in L1: the bias gradient without a pass of its own over dY.
void transform_grads(const Conv2dGeometry& g, const TileGrid& t, const float* dout, int64_t first, int64_t count,
                     float* dm, double* sums) {
  const int64_t tiles = count * t.per_image(), l = t.oh * t.ow, pitch = 2 * t.tw;
  const bool whole = t.oh % 2 == 0 && t.ow % 2 == 0;  // no partial tiles: read dY as it is
  parallel_for(count * g.out_channels, grain_for(kPoints * t.per_image()), [&](int64_t bo) {
    const int64_t b = bo / g.out_channels, co = bo % g.out_channels;
    const float* dy = dout + ((first + b) * g.out_channels + co) * l;
    if (bo + 1 < count * g.out_channels) prefetch_plane(dy + l, l);
    const float* tiled = dy;
    if (!whole) {  // (2 TH, 2 TW), zeros past the plane's last row and column
      float* padded = plane_buffer(2 * t.th * pitch);
      std::fill_n(padded, 2 * t.th * pitch, 0.0f);
      for (int64_t y = 0; y < t.oh; ++y) std::copy_n(dy + y * t.ow, t.ow, padded + y * pitch);
      tiled = padded;
    }
    transform_grad_plane(t, tiled, whole ? t.ow : pitch, point_stride(g.out_channels, tiles),
                         dm + co * tiles + b * t.per_image());
    if (sums != nullptr) sums[(first + b) * g.out_channels + co] = plane_sum(dy, l);
  });
}

void transform_input_grads(const Conv2dGeometry& g, const TileGrid& t, const float* dv, int64_t first, int64_t count,
                           float* dx) {
  const int64_t tiles = count * t.per_image(), row = 2 * (t.tw + 1), size = g.in_h * g.in_w;
  // Each (image, channel) plane of dx is written by one iteration only.
  parallel_for(count * g.in_channels, grain_for(kPoints * t.per_image()), [&](int64_t bc) {
    const int64_t b = bc / g.in_channels, c = bc % g.in_channels;
    float* plane = dx + ((first + b) * g.in_channels + c) * size;
    if (bc + 1 < count * g.in_channels) prefetch_plane_for_writing(plane + size, size);
    transform_input_grad_plane(g, t, dv + c * tiles + b * t.per_image(), point_stride(g.in_channels, tiles), plane,
                               plane_buffer(8 * row));
  });
}

// dbias (Cout) from each plane's sum, sums (N, Cout), in conv2d_bias_gradient's order: the
// same bits.
void bias_from_plane_sums(const Conv2dGeometry& g, const double* sums, float* dbias) {
  for (int64_t co = 0; co < g.out_channels; ++co) {
    double sum = 0.0;
    for (int64_t b = 0; b < g.batch; ++b) sum += sums[b * g.out_channels + co];
    dbias[co] = float(sum);
  }
}

// Calls product(e) for each of the 16 points. A chunk's 16 products are independent: on
// several threads each thread takes whole products (OpenBLAS runs one thread inside an
// OpenMP region), where one OpenBLAS call over all threads splits products too small to
// split well. Each product and, per point, the order of the chunks stay the same, and so do
// the bits.
template <typename F>
void for_each_point(F&& product) {
  parallel_for(kPoints, 1, product);
}

}  // namespace

bool winograd_applies(const Conv2dGeometry& g) {
  return g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.groups == 1;
}

int64_t winograd_chunk(const Conv2dGeometry& g) {
  // 1 MB each of V and M, so both stay in a 2 MB L2 (docs/cnn.md, "Winograd F(2x2, 3x3)").
  constexpr int64_t kTransformFloats = int64_t(1) << 18;
  const TileGrid t(g);
  const int64_t per_image = std::max<int64_t>(1, kPoints * std::max(g.in_channels, g.out_channels) * t.per_image());
  return std::clamp<int64_t>(kTransformFloats / per_image, 1, std::max<int64_t>(1, g.batch));
}

void winograd_forward(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias, float* out) {
  const TileGrid t(g);
  const int64_t cin = g.in_channels, cout = g.out_channels, chunk = winograd_chunk(g);
  float* u = conv_scratch(ConvSlot::Weights, kPoints * cout * cin);                                  // (16, Cout, Cin)
  float* v = conv_scratch(ConvSlot::Inputs, kPoints * point_stride(cin, chunk * t.per_image()));     // (16, Cin, T)
  float* m = conv_scratch(ConvSlot::Products, kPoints * point_stride(cout, chunk * t.per_image()));  // (16, Cout, T)
  transform_weights(g, weight, u);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t count = std::min(chunk, g.batch - first), tiles = count * t.per_image();
    const int64_t sv = point_stride(cin, tiles), sm = point_stride(cout, tiles);
    transform_inputs(g, t, x, first, count, v);
    for_each_point([&](int64_t e) {  // M_e (Cout, T) = U_e (Cout, Cin) V_e (Cin, T)
      gemm(false, false, cout, tiles, cin, 1.0f, u + e * cout * cin, v + e * sv, 0.0f, m + e * sm);
    });
    transform_outputs(g, t, m, bias, first, count, out);
  }
}

void winograd_backward(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                       float* dweight, float* dbias) {
  if (dweight != nullptr && g.batch == 0) std::fill_n(dweight, g.weight_numel(), 0.0f);
  if ((dx == nullptr && dweight == nullptr) || g.batch == 0) {
    if (dbias != nullptr) conv2d_bias_gradient(g, dout, dbias);
    return;
  }
  const TileGrid t(g);
  const int64_t cin = g.in_channels, cout = g.out_channels, chunk = winograd_chunk(g);
  float* u = conv_scratch(ConvSlot::Weights, dx != nullptr ? kPoints * cout * cin : 0);            // (16, Cout, Cin)
  float* du = conv_scratch(ConvSlot::WeightGrads, dweight != nullptr ? kPoints * cout * cin : 0);  // (16, Cout, Cin)
  float* v =
      conv_scratch(ConvSlot::Inputs, kPoints * point_stride(cin, chunk * t.per_image()));  // V, then dV: (16, Cin, T)
  float* dm = conv_scratch(ConvSlot::Products, kPoints * point_stride(cout, chunk * t.per_image()));  // (16, Cout, T)
  thread_local std::vector<double> plane_sums;  // (N, Cout): dY's planes, for the bias gradient
  if (dbias != nullptr) plane_sums.resize(size_t(g.batch * cout));
  if (dx != nullptr) transform_weights(g, weight, u);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t count = std::min(chunk, g.batch - first), tiles = count * t.per_image();
    const int64_t sv = point_stride(cin, tiles), sm = point_stride(cout, tiles);
    transform_grads(g, t, dout, first, count, dm, dbias != nullptr ? plane_sums.data() : nullptr);
    if (dweight != nullptr) {  // dU_e (Cout, Cin) += dM_e (Cout, T) V_e^T, chunks in order
      transform_inputs(g, t, x, first, count, v);
      for_each_point([&](int64_t e) {
        gemm(false, true, cout, cin, tiles, 1.0f, dm + e * sm, v + e * sv, first == 0 ? 0.0f : 1.0f,
             du + e * cout * cin);
      });
    }
    if (dx != nullptr) {  // dV_e (Cin, T) = U_e^T (Cin, Cout) dM_e (Cout, T)
      for_each_point([&](int64_t e) {
        gemm(true, false, cin, tiles, cout, 1.0f, u + e * cout * cin, dm + e * sm, 0.0f, v + e * sv);
      });
      transform_input_grads(g, t, v, first, count, dx);
    }
  }
  if (dweight != nullptr) untransform_weight_grads(g, du, dweight);
  if (dbias != nullptr) bias_from_plane_sums(g, plane_sums.data(), dbias);
}

}  // namespace minidl::kernels
