#include "minidl/ops/softmax.hpp"

#include <cmath>

#include "kernels/dim_copy.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"

namespace minidl {
namespace {

kernels::DimLayout layout_of(const Tensor& x, int64_t dim) {
  return kernels::layout_around(x.shape(), normalize_dim(dim, x.dim()));
}

// Calls f(base) for the first element of every line along the layout's middle dim; the
// line's entries are base, base + inner, ..., base + (extent - 1) inner.
template <typename F>
void for_each_line(const kernels::DimLayout& l, F f) {
  for (int64_t a = 0; a < l.outer; ++a)
    for (int64_t i = 0; i < l.inner; ++i) f(a * l.extent * l.inner + i);
}

float line_max(const float* in, int64_t base, const kernels::DimLayout& l) {
  float top = -INFINITY;
  for (int64_t j = 0; j < l.extent; ++j) top = std::max(top, in[base + j * l.inner]);
  return top;
}

// sum_j exp(x_j - top) over a line, in double; writes each exp, rounded, to `exps` when given.
double line_exp_sum(const float* in, float* exps, int64_t base, const kernels::DimLayout& l, float top) {
  double total = 0.0;
  for (int64_t j = 0; j < l.extent; ++j) {
    const double e = std::exp(double(in[base + j * l.inner] - top));
    if (exps) exps[base + j * l.inner] = float(e);
    total += e;
  }
  return total;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  const kernels::DimLayout l = layout_of(x, dim);
  Tensor out = Tensor::empty(x.shape());
  const float* in = x.data();
  float* o = out.data();
  for_each_line(l, [&](int64_t base) {
    // All -inf: top is -inf and x - top is NaN, PyTorch's answer for a fully masked row.
    const double scale = 1.0 / line_exp_sum(in, o, base, l, line_max(in, base, l));
    for (int64_t j = 0; j < l.extent; ++j) o[base + j * l.inner] = float(double(o[base + j * l.inner]) * scale);
  });
  if (!needs_grad({x})) return out;
  const SavedTensor saved_out = SavedTensor::output(out, "Softmax");
  return record(out, "Softmax", {x}, [saved_out, l](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& y = saved_out.unpack();
    // dx_j = y_j (g_j - sum_k g_k y_k)
    Tensor gx = Tensor::empty(y.shape());
    for_each_line(l, [&](int64_t base) {
      double dot = 0.0;
      for (int64_t j = 0; j < l.extent; ++j) dot += double(g.data()[base + j * l.inner]) * y.data()[base + j * l.inner];
      for (int64_t j = 0; j < l.extent; ++j) {
        const int64_t k = base + j * l.inner;
        gx.data()[k] = y.data()[k] * (g.data()[k] - float(dot));
      }
    });
    return {gx};
  });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  const kernels::DimLayout l = layout_of(x, dim);
  Tensor out = Tensor::empty(x.shape());
  const float* in = x.data();
  float* o = out.data();
  for_each_line(l, [&](int64_t base) {
    const float top = line_max(in, base, l);
    // (x - max) - log(total): adding the log to the max first would round it away.
    const auto log_total = float(std::log(line_exp_sum(in, nullptr, base, l, top)));
    for (int64_t j = 0; j < l.extent; ++j) o[base + j * l.inner] = (in[base + j * l.inner] - top) - log_total;
  });
  if (!needs_grad({x})) return out;
  const SavedTensor saved_out = SavedTensor::output(out, "LogSoftmax");
  return record(out, "LogSoftmax", {x}, [saved_out, l](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& saved = saved_out.unpack();
    // dx_j = g_j - softmax_j * sum_k g_k
    Tensor gx = Tensor::empty(saved.shape());
    for_each_line(l, [&](int64_t base) {
      double total = 0.0;
      for (int64_t j = 0; j < l.extent; ++j) total += g.data()[base + j * l.inner];
      for (int64_t j = 0; j < l.extent; ++j) {
        const int64_t k = base + j * l.inner;
        gx.data()[k] = g.data()[k] - std::exp(saved.data()[k]) * float(total);
      }
    });
    return {gx};
  });
}

}  // namespace minidl
