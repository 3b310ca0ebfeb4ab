#include "minidl/ops/matmul.hpp"

#include "kernels/column_sums.hpp"
#include "kernels/gemm.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

struct Dims {
  int64_t m, n, k;
};

// Shape after the optional transpose: rows, cols.
std::pair<int64_t, int64_t> op_shape(const Tensor& t, bool transpose) {
  return transpose ? std::pair{t.size(1), t.size(0)} : std::pair{t.size(0), t.size(1)};
}

Dims check_matmul(const char* op, const Tensor& a, bool ta, const Tensor& b, bool tb) {
  if (a.dim() != 2 || b.dim() != 2)
    throw Error(
        cat(op, ": expected two 2-D tensors, got shapes ", to_string(a.shape()), " and ", to_string(b.shape())));
  auto [m, ka] = op_shape(a, ta);
  auto [kb, n] = op_shape(b, tb);
  if (ka != kb)
    throw Error(cat(op, ": shapes ", to_string(a.shape()), (ta ? "^T" : ""), " and ", to_string(b.shape()),
                    (tb ? "^T" : ""), " cannot be multiplied (", m, "x", ka, " and ", kb, "x", n, ")"));
  return {m, n, ka};
}

}  // namespace

Tensor matmul_t(const Tensor& a, bool ta, const Tensor& b, bool tb) {
  const Dims d = check_matmul("matmul", a, ta, b, tb);
  Tensor out = Tensor::empty({d.m, d.n});
  kernels::gemm(ta, tb, d.m, d.n, d.k, 1.0f, a.data(), b.data(), 0.0f, out.data());
  const SavedTensor saved_a = needs_grad({b}) ? SavedTensor(a) : SavedTensor();
  const SavedTensor saved_b = needs_grad({a}) ? SavedTensor(b) : SavedTensor();
  return record(out, "Mm", {a, b}, [saved_a, ta, saved_b, tb](const Tensor& g) -> std::vector<Tensor> {
    // C = op(A) op(B): dop(A) = G op(B)^T, dop(B) = op(A)^T G; a transposed op flips back.
    const Tensor& sa = saved_a.unpack();
    const Tensor& sb = saved_b.unpack();
    Tensor ga, gb;
    if (sb.defined()) ga = ta ? matmul_t(sb, tb, g, true) : matmul_t(g, false, sb, !tb);
    if (sa.defined()) gb = tb ? matmul_t(g, true, sa, ta) : matmul_t(sa, !ta, g, false);
    return {ga, gb};
  });
}

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_t(a, false, b, false); }

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Dims d = check_matmul("linear", x, false, weight, true);
  if (bias.defined() && bias.shape() != Shape{d.n})
    throw Error(cat("linear: expected a bias of shape [", d.n, "], got ", to_string(bias.shape())));
  Tensor out = Tensor::empty({d.m, d.n});  // (N, out)
  float beta = 0.0f;
  if (bias.defined()) {  // each row starts as the bias; sgemm adds x W^T onto it
    const float* b = bias.data();
    float* rows = out.data();  // (N, out)
    for (int64_t i = 0; i < d.m; ++i) std::copy_n(b, d.n, rows + i * d.n);
    beta = 1.0f;
  }
  kernels::gemm(false, true, d.m, d.n, d.k, 1.0f, x.data(), weight.data(), beta, out.data());
  const SavedTensor saved_x = needs_grad({weight}) ? SavedTensor(x) : SavedTensor();
  const SavedTensor saved_w = needs_grad({x}) ? SavedTensor(weight) : SavedTensor();
  const bool want_bias = needs_grad({bias});
  return record(out, "Linear", {x, weight, bias}, [saved_x, saved_w, want_bias, d](const Tensor& g) {
    const Tensor& sx = saved_x.unpack();
    const Tensor& sw = saved_w.unpack();
    Tensor gx, gw, gb;
    if (sw.defined()) {  // dx (N, in) = g (N, out) W (out, in)
      gx = Tensor::empty({d.m, d.k});
      kernels::gemm(false, false, d.m, d.k, d.n, 1.0f, g.data(), sw.data(), 0.0f, gx.data());
    }
    if (sx.defined()) {  // dW (out, in) = g^T (out, N) x (N, in)
      gw = Tensor::empty({d.n, d.k});
      kernels::gemm(true, false, d.n, d.k, d.m, 1.0f, g.data(), sx.data(), 0.0f, gw.data());
    }
    if (want_bias) {  // db (out) = column sums of g, accumulated in double
      gb = Tensor::empty({d.n});
      kernels::column_sums(g.data(), d.m, d.n, gb.data());
    }
    return std::vector<Tensor>{gx, gw, gb};
  });
}

}  // namespace minidl
