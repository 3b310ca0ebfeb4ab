#include "minidl/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "kernels/broadcast.hpp"
#include "kernels/dim_copy.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// The reduced dims as a mask; empty axes means every dim.
std::vector<bool> reduced_mask(const Tensor& x, const Axes& axes) {
  // A scalar accepts dim 0 or -1, the same dim, and stays as it is.
  std::vector<bool> seen(size_t(std::max<int64_t>(x.dim(), 1)), false);
  for (int64_t axis : axes) {
    const int64_t d = std::max<int64_t>(normalize_dim(axis, x.dim()), 0);
    if (seen[size_t(d)]) throw Error(cat("dim ", d, " appears multiple times in the list of dims ", to_string(axes)));
    seen[size_t(d)] = true;
  }
  std::vector<bool> mask(size_t(x.dim()), axes.empty());
  for (size_t d = 0; d < mask.size(); ++d) mask[d] = mask[d] || seen[d];
  return mask;
}

struct ReductionPlan {
  Shape kept;     // same rank as x, 1 along reduced dims
  Shape result;   // kept, or with the reduced dims dropped
  int64_t count;  // elements folded into each output
};

ReductionPlan plan(const Tensor& x, const Axes& axes, bool keepdim) {
  std::vector<bool> mask = reduced_mask(x, axes);
  ReductionPlan r{x.shape(), {}, 1};
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) {
      r.count *= r.kept[d];
      r.kept[d] = 1;
      if (keepdim) r.result.push_back(1);
    } else {
      r.result.push_back(x.shape()[d]);
    }
  }
  return r;
}

// Broadcasts a reduced gradient (read as `kept`, 1 along reduced dims) over `shape`.
Tensor expand_to(const Tensor& g, const Shape& kept, const Shape& shape) {
  Tensor out = Tensor::empty(shape);
  const float unused = 0.0f;
  kernels::broadcast_binary(g.data(), kept, &unused, Shape{}, out.data(), shape, [](float v, float) { return v; });
  return out;
}

// x's shape with dim d dropped, or 1 with keepdim.
Shape without_dim(const Tensor& x, int64_t d, bool keepdim) {
  Shape result = x.shape();
  if (x.dim() > 0 && keepdim) result[size_t(d)] = 1;
  else if (x.dim() > 0) result.erase(result.begin() + d);
  return result;
}

// Index of the first maximum of each (outer, inner) lane; NaN counts as the maximum.
std::vector<int64_t> argmax_lanes(const Tensor& x, const kernels::DimLayout& a) {
  if (a.extent == 0) throw Error(cat("max/argmax: cannot reduce an empty dimension of shape ", to_string(x.shape())));
  std::vector<int64_t> best(size_t(a.outer * a.inner), 0);
  const float* p = x.data();
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      const float* lane = p + o * a.extent * a.inner + i;
      int64_t arg = 0;
      for (int64_t j = 1; j < a.extent && lane[arg * a.inner] == lane[arg * a.inner]; ++j)
        if (lane[j * a.inner] > lane[arg * a.inner] || lane[j * a.inner] != lane[j * a.inner]) arg = j;
      best[size_t(o * a.inner + i)] = arg;
    }
  return best;
}

// The gradient of a full var with no degrees of freedom left (n <= correction), as PyTorch
// 2.x's var_backward: g * inf, taken as 2 (x - mean) / 0 with the sign of g, except NaN where
// x equals the mean (inf * 0). So one element with correction 1 gives NaN, as its value does.
Tensor full_var_grad_without_dof(float g, const Tensor& centered) {
  Tensor gx = Tensor::empty(centered.shape());
  const float* pc = centered.data();
  float* pg = gx.data();
  for (int64_t i = 0; i < gx.numel(); ++i) pg[i] = pc[i] == 0.0f ? NAN : g * INFINITY;
  return gx;
}

}  // namespace

Tensor sum(const Tensor& x, const Axes& axes, bool keepdim) {
  ReductionPlan r = plan(x, axes, keepdim);
  Tensor out = Tensor::empty(r.result);
  kernels::sum_to_shape(x.data(), x.shape(), out.data(), r.kept);
  return record(out, "Sum", {x}, [kept = r.kept, shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
    return {expand_to(g, kept, shape)};
  });
}

Tensor mean(const Tensor& x, const Axes& axes, bool keepdim) {
  ReductionPlan r = plan(x, axes, keepdim);
  return div(sum(x, axes, keepdim), Tensor::scalar(float(r.count)));
}

Tensor var(const Tensor& x, const Axes& axes, int64_t correction, bool keepdim) {
  ReductionPlan r = plan(x, axes, keepdim);
  // Two passes in double: the exact mean first, then squared deviations from it. Centring
  // on the mean rounded to float (never mind E[x^2] - E[x]^2) loses the spread when the
  // mean is large against it.
  const float* px = x.data();
  std::vector<double> mu(size_t(numel(r.kept)), 0.0), squares(mu.size(), 0.0);
  kernels::for_each_reduced(x.shape(), r.kept, [&](int64_t i, int64_t o) { mu[size_t(o)] += px[i]; });
  for (double& m : mu) m /= double(r.count);
  Tensor centered = Tensor::empty(x.shape());  // x - mean, for the backward
  float* pc = centered.data();
  kernels::for_each_reduced(x.shape(), r.kept, [&](int64_t i, int64_t o) {
    const double c = px[i] - mu[size_t(o)];
    squares[size_t(o)] += c * c;
    pc[i] = float(c);
  });
  const double dof = double(r.count - correction);
  const double divisor = std::max(0.0, dof);  // 0 / 0 is NaN, more over 0 is inf, as PyTorch
  Tensor out = Tensor::empty(r.result);
  for (size_t o = 0; o < squares.size(); ++o) out.data()[o] = float(squares[o] / divisor);
  const bool full = x.dim() == 0 || axes.empty();
  return record(out, "Var", {x}, [centered, kept = r.kept, dof, full](const Tensor& g) -> std::vector<Tensor> {
    // d var / dx = 2 (x - mean) / (n - correction); the mean's own dependence on x
    // contributes sum(x - mean) = 0. With explicit dims PyTorch divides by the unclamped
    // n - correction; a full reduction with n <= correction takes the factor as +inf.
    if (full && dof <= 0.0) return {full_var_grad_without_dof(g.data()[0], centered)};
    Tensor gx = Tensor::empty(centered.shape());
    const auto scale = float(2.0 / dof);
    kernels::broadcast_binary(g.data(), kept, centered.data(), centered.shape(), gx.data(), centered.shape(),
                              [scale](float gi, float c) { return gi * c * scale; });
    return {gx};
  });
}

Tensor max(const Tensor& x, int64_t dim, bool keepdim) {
  const int64_t d = normalize_dim(dim, x.dim());
  const kernels::DimLayout a = kernels::layout_around(x.shape(), d);
  std::vector<int64_t> best = argmax_lanes(x, a);
  Tensor out = Tensor::empty(without_dim(x, d, keepdim));
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i)
      out.data()[o * a.inner + i] = x.data()[(o * a.extent + best[size_t(o * a.inner + i)]) * a.inner + i];
  return record(out, "Max", {x}, [best, a, shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = Tensor::zeros(shape);
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t i = 0; i < a.inner; ++i)
        gx.data()[(o * a.extent + best[size_t(o * a.inner + i)]) * a.inner + i] = g.data()[o * a.inner + i];
    return {gx};
  });
}

Tensor max(const Tensor& x) {
  if (x.numel() == 0) throw Error(cat("max(): expected a non-empty tensor, got shape ", to_string(x.shape())));
  const float* p = x.data();
  const int64_t n = x.numel();
  float top = p[0];
  for (int64_t i = 1; i < n && top == top; ++i)  // NaN wins, as in PyTorch
    if (p[i] > top || p[i] != p[i]) top = p[i];
  Tensor out = Tensor::scalar(top);
  const SavedTensor saved_x = needs_grad({x}) ? SavedTensor(x) : SavedTensor();
  return record(out, "Max", {x}, [saved_x, top](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& saved = saved_x.unpack();
    // PyTorch shares the gradient evenly between tied maxima.
    const auto is_top = [top](float v) { return v == top || (top != top && v != v); };
    const float* v = saved.data();
    int64_t ties = 0;
    for (int64_t i = 0; i < saved.numel(); ++i) ties += is_top(v[i]);
    const float share = g.item() / float(ties);
    Tensor gx = Tensor::empty(saved.shape());
    for (int64_t i = 0; i < saved.numel(); ++i) gx.data()[i] = is_top(v[i]) ? share : 0.0f;
    return {gx};
  });
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  const int64_t d = normalize_dim(dim, x.dim());
  const std::vector<int64_t> best = argmax_lanes(x, kernels::layout_around(x.shape(), d));
  Tensor out = Tensor::empty(without_dim(x, d, keepdim));
  for (size_t i = 0; i < best.size(); ++i) out.data()[i] = float(best[i]);
  return out;
}

Tensor Tensor::sum(const std::vector<int64_t>& axes, bool keepdim) const { return minidl::sum(*this, axes, keepdim); }
Tensor Tensor::mean(const std::vector<int64_t>& axes, bool keepdim) const { return minidl::mean(*this, axes, keepdim); }

}  // namespace minidl
