#pragma once
// Winograd F(2x2, 3x3) (Lavin & Gray 2015, "Fast Algorithms for Convolutional Neural
// Networks"): Conv2d with 3x3 kernels, stride 1, dilation 1, groups 1, any padding.
//
// The output is cut into 2x2 tiles (partial at odd edges), each read from a 4x4 input tile.
// With B^T (4x4), G (4x3) and A^T (2x4) of the paper, one tile of one channel pair is
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A,
// 16 products in place of 36. Summed over input channels, each of the 16 transformed
// positions e is one matrix product per chunk of images,
//   M_e (Cout, T) = U_e (Cout, Cin) x V_e (Cin, T),   T = tiles of the chunk,
// 16 sgemm of depth Cin instead of one of depth 9 Cin: 2.25x fewer multiplications.
//
// The backward is this computation's adjoint, the transforms transposed:
//   dM_e = A dY A^T  (each 2x2 output tile to 4x4);
//   dU_e (Cout, Cin) += dM_e (Cout, T) x V_e^T,  dg = G^T dU G        (the weight gradient);
//   dV_e (Cin, T) = U_e^T x dM_e,  dd = B dV B^T added into dx        (the input gradient).
// The same sums as a correlation of dY with the flipped, transposed weights, without a
// second weight transform, and dY is transformed once for both gradients.
#include "kernels/conv/conv2d.hpp"

namespace minidl::kernels {

/// Whether the F(2x2, 3x3) kernels compute g: 3x3, stride 1, dilation 1, groups 1.
bool winograd_applies(const Conv2dGeometry& g);
/// Images per chunk: as many as keep the transformed inputs (16, Cin, T) and products
/// (16, Cout, T) under about 1 MB each, at least one.
int64_t winograd_chunk(const Conv2dGeometry& g);

// x (N, Cin, H, W), weight (Cout, Cin, 3, 3), bias (Cout) or null, out (N, Cout, OH, OW).
void winograd_forward(const Conv2dGeometry& g, const float* x, const float* weight, const float* bias, float* out);
/// Gradients of sum(out * dout); each may be null (not wanted); overwritten, not
/// accumulated into. x is read only for dweight, weight only for dx.
void winograd_backward(const Conv2dGeometry& g, const float* x, const float* weight, const float* dout, float* dx,
                       float* dweight, float* dbias);

}  // namespace minidl::kernels
