#include "minidl/ops/matmul.hpp"

#include "kernels/broadcast.hpp"
#include "kernels/column_sums.hpp"
#include "kernels/gemm.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"
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

namespace {

// Batched (..., n, k) x (..., k, m) -> (broadcast batch, n, m), both of rank >= 2 and at
// least one of rank >= 3: an sgemm per batch matrix, on pointers into the operands.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(-2), k = a.size(-1), kb = b.size(-2), m = b.size(-1);
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const auto mismatch = [&] {
    return Error(cat("matmul: shapes ", to_string(a.shape()), " and ", to_string(b.shape()),
                     " cannot be multiplied (batch dims must broadcast, ", n, "x", k, " and ", kb, "x", m, ")"));
  };
  if (k != kb) throw mismatch();
  Shape batch(std::max(a_batch.size(), b_batch.size()), 1);  // the broadcast batch dims
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto dim_of = [&](const Shape& s) {
      return i + s.size() >= batch.size() ? s[i + s.size() - batch.size()] : 1;
    };
    const int64_t da = dim_of(a_batch), db = dim_of(b_batch);
    if (da != db && da != 1 && db != 1) throw mismatch();
    batch[i] = da == 1 ? db : da;
  }
  const int64_t count = numel(batch);
  // Each batch index's matrix in a and in b: strides 0 along broadcast dims.
  const Shape sa = kernels::broadcast_strides(a_batch, batch), sb = kernels::broadcast_strides(b_batch, batch);
  std::vector<int64_t> a_at(static_cast<size_t>(count)), b_at(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_at[size_t(i)] = oa * n * k;
    b_at[size_t(i)] = ob * k * m;
  }
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {n, m});
  Tensor out = Tensor::empty(out_shape);  // (batch, n, m)
  for (int64_t i = 0; i < count; ++i)
    kernels::gemm(false, false, n, m, k, 1.0f, a.data() + a_at[size_t(i)], b.data() + b_at[size_t(i)], 0.0f,
                  out.data() + i * n * m);
  const SavedTensor saved_a = needs_grad({b}) ? SavedTensor(a) : SavedTensor();
  const SavedTensor saved_b = needs_grad({a}) ? SavedTensor(b) : SavedTensor();
  return record(out, "Bmm", {a, b},
                [saved_a, saved_b, a_at, b_at, n, k, m, count, batch, a_shape = a.shape(),
                 b_shape = b.shape()](const Tensor& g) -> std::vector<Tensor> {
                  // Per batch matrix dA = G B^T, dB = A^T G (sgemm transpose flags), summed over
                  // the batch dims that broadcasting expanded.
                  const Tensor& sa_saved = saved_a.unpack();
                  const Tensor& sb_saved = saved_b.unpack();
                  Tensor ga, gb;
                  if (sb_saved.defined()) {
                    Shape full = batch;
                    full.insert(full.end(), {n, k});
                    ga = Tensor::empty(full);
                    for (int64_t i = 0; i < count; ++i)
                      kernels::gemm(false, true, n, k, m, 1.0f, g.data() + i * n * m, sb_saved.data() + b_at[size_t(i)],
                                    0.0f, ga.data() + i * n * k);
                    ga = sum_to(ga, a_shape);
                  }
                  if (sa_saved.defined()) {
                    Shape full = batch;
                    full.insert(full.end(), {k, m});
                    gb = Tensor::empty(full);
                    for (int64_t i = 0; i < count; ++i)
                      kernels::gemm(true, false, k, m, n, 1.0f, sa_saved.data() + a_at[size_t(i)], g.data() + i * n * m,
                                    0.0f, gb.data() + i * k * m);
                    gb = sum_to(gb, b_shape);
                  }
                  return {ga, gb};
                });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0)
    throw Error(cat("matmul: both arguments need at least 1 dimension, got shapes ", to_string(a.shape()), " and ",
                    to_string(b.shape())));
  if (a.dim() == 2 && b.dim() == 2) return matmul_t(a, false, b, false);
  // A 1-D operand becomes a (1, k) row or a (k, 1) column, and that dim is dropped again.
  if (a.dim() == 1 || b.dim() == 1) {
    if (a.size(-1) != (b.dim() == 1 ? b.size(0) : b.size(-2)))
      throw Error(cat("matmul: shapes ", to_string(a.shape()), " and ", to_string(b.shape()), " cannot be multiplied"));
    const Tensor a2 = a.dim() == 1 ? a.reshape({1, a.size(0)}) : a;
    const Tensor b2 = b.dim() == 1 ? b.reshape({b.size(0), 1}) : b;
    Tensor product = matmul(a2, b2);
    Shape shape(product.shape().begin(), product.shape().end() - 2);
    if (a.dim() > 1) shape.push_back(a.size(-2));
    if (b.dim() > 1) shape.push_back(b.size(-1));
    return product.reshape(shape);
  }
  // (..., n, k) x (k, m): the batch folds into the rows of one sgemm (a view, no copy).
  if (b.dim() == 2) {
    if (a.size(-1) != b.size(0))
      throw Error(cat("matmul: shapes ", to_string(a.shape()), " and ", to_string(b.shape()), " cannot be multiplied (",
                      a.size(-2), "x", a.size(-1), " and ", b.size(0), "x", b.size(1), ")"));
    Shape shape = a.shape();
    shape.back() = b.size(1);
    return matmul_t(a.reshape({-1, a.size(-1)}), false, b, false).reshape(shape);
  }
  return batched_matmul(a, b);
}

namespace {

// y = x W^T + b, x (N, in).
Tensor linear_2d(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Dims d = check_matmul("linear", x, false, weight, true);
  if (bias.defined() && bias.shape() != Shape{d.n})
    throw Error(cat("linear: expected a bias of shape [", d.n, "], got ", to_string(bias.shape())));
  Tensor out = Tensor::empty({d.m, d.n});  // (N, out)
  kernels::gemm(false, true, d.m, d.n, d.k, 1.0f, x.data(), weight.data(), 0.0f, out.data());
  // Then the bias onto each row, a vector add (add_row_to_rows says what it rounds).
  if (bias.defined()) kernels::add_row_to_rows(out.data(), bias.data(), d.m, d.n);
  if (!needs_grad({x, weight, bias})) return out;
  const SavedTensor saved_x = needs_grad({weight}) ? SavedTensor(x) : SavedTensor();
  const SavedTensor saved_w = needs_grad({x}) ? SavedTensor(weight) : SavedTensor();
  const bool want_bias = needs_grad({bias});
  return record(out, "Linear", {x, weight, bias}, [saved_x, saved_w, want_bias, d](const Tensor& g) {
    const Tensor& sx = saved_x.unpack();
    const Tensor& sw = saved_w.unpack();
    Tensor gx, gw, gb;
    if (want_bias) {  // db (out) = column sums of g (N, out), accumulated in double
      gb = Tensor::empty({d.n});
      kernels::column_sums(g.data(), d.m, d.n, gb.data());
    }
    if (sw.defined()) {  // dx (N, in) = g (N, out) W (out, in)
      gx = Tensor::empty({d.m, d.k});
      kernels::gemm(false, false, d.m, d.k, d.n, 1.0f, g.data(), sw.data(), 0.0f, gx.data());
    }
    if (sx.defined()) {  // dW (out, in) = g^T (out, N) x (N, in)
      gw = Tensor::empty({d.n, d.k});
      kernels::gemm(true, false, d.n, d.k, d.m, 1.0f, g.data(), sx.data(), 0.0f, gw.data());
    }
    return std::vector<Tensor>{gx, gw, gb};
  });
}

}  // namespace

// linear_2d over x's rows, any leading dims folded into one batch dim (a view), then restored.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (x.dim() == 2) return linear_2d(x, weight, bias);
  if (x.dim() == 0 || weight.dim() != 2 || x.size(-1) != weight.size(1))
    throw Error(cat("linear: expected input of shape [*, in] for weight of shape [out, in] = ",
                    to_string(weight.shape()), ", got ", to_string(x.shape())));
  Shape shape = x.shape();
  shape.back() = weight.size(0);
  return linear_2d(x.reshape({-1, x.size(-1)}), weight, bias).reshape(shape);
}

}  // namespace minidl
