#include "minidl/autograd/gradcheck.hpp"

#include <cmath>
#include <limits>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::autograd {
namespace {

constexpr double kUnitRoundoff = 0x1p-24;  // u: float32's round-to-nearest relative error

// f(inputs)'s values, without recording a graph, checked to keep v's shape. Copied out: f may
// return a view of an input, which the next step would change.
std::vector<float> evaluate(const GradcheckFunction& f, const std::vector<Tensor>& inputs, const Tensor& v) {
  NoGradGuard no_grad;
  const Tensor y = f(inputs);
  if (y.shape() != v.shape())
    throw Error(cat("gradcheck: f's output changed shape from ", to_string(v.shape()), " to ", to_string(y.shape())));
  return y.to_vector();
}

// One input element's central difference of F = sum(f * v) (in double), and the largest error
// the float32 rounding of f's outputs can put into it.
struct Difference {
  double numeric;
  double rounding;
};

// d/dx_i of sum(f * v) by central differences; x_i is restored afterwards. Only the outputs x_i
// moved differ between the two evaluations; each carries up to ulps * u * |f_j| of rounding on
// either side, so the difference quotient is off by at most ulps * u * sum_j (|f_j(up) v_j| +
// |f_j(down) v_j|) / (up - down) from it.
Difference central_difference(const GradcheckFunction& f, const std::vector<Tensor>& inputs, const Tensor& v, float& x,
                              double eps, double ulps) {
  const float saved = x;
  const float up = float(double(saved) + eps), down = float(double(saved) - eps);
  x = up;
  const std::vector<float> y_up = evaluate(f, inputs, v);
  x = down;
  const std::vector<float> y_down = evaluate(f, inputs, v);
  x = saved;
  double delta = 0.0, moved = 0.0;
  for (int64_t j = 0; j < v.numel(); ++j) {
    const double a = y_up[size_t(j)], b = y_down[size_t(j)], vj = v.data()[j];
    delta += (a - b) * vj;
    if (a != b) moved += (std::abs(a) + std::abs(b)) * std::abs(vj);
  }
  const double step = double(up) - double(down);
  return {delta / step, ulps * kUnitRoundoff * moved / step};
}

std::string describe(const GradcheckReport& r, const GradcheckOptions& o) {
  if (r.index < 0) return "gradcheck passed: no input elements";
  return cat("gradcheck ", r.passed ? "passed" : "failed", ": worst element is input ", r.input, ", element ", r.index,
             " (flat): analytic ", r.analytic, ", numeric ", r.numeric, ", |diff| ", std::abs(r.analytic - r.numeric),
             " against atol + rtol * |numeric| + rounding = ", o.atol + o.rtol * std::abs(r.numeric) + r.rounding,
             " (eps ", o.eps, ", atol ", o.atol, ", rtol ", o.rtol, ", rounding ", r.rounding, " from ",
             o.rounding_ulps, " ulps of the outputs it moved)");
}

}  // namespace

GradcheckReport gradcheck(const GradcheckFunction& f, std::vector<Tensor> inputs, const GradcheckOptions& options) {
  if (!(options.eps > 0.0) || options.atol < 0.0 || options.rtol < 0.0 || options.rounding_ulps < 0.0)
    throw Error(cat("gradcheck: expected eps > 0, atol >= 0, rtol >= 0 and rounding_ulps >= 0, got eps ", options.eps,
                    ", atol ", options.atol, ", rtol ", options.rtol, ", rounding_ulps ", options.rounding_ulps));
  for (Tensor& x : inputs) {
    x.requires_grad_(true);
    x.zero_grad();  // a gradient left by an earlier backward (the same input checked twice) is not f's
  }
  Generator gen(options.seed);
  const Tensor out = f(inputs);
  const Tensor v = Tensor::randn(out.shape(), gen);
  sum(mul(out, v)).backward();

  GradcheckReport worst;
  worst.excess = -1.0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor analytic = inputs[k].grad();  // undefined: f does not depend on the input
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      const double a = analytic.defined() ? double(analytic.data()[i]) : 0.0;
      const Difference d = central_difference(f, inputs, v, inputs[k].data()[i], options.eps, options.rounding_ulps);
      const double bound = options.atol + options.rtol * std::abs(d.numeric) + d.rounding;
      const double diff = std::abs(a - d.numeric);
      double excess = diff == 0.0 ? 0.0 : diff / bound;                          // bound 0: infinity
      if (std::isnan(excess)) excess = std::numeric_limits<double>::infinity();  // a NaN on either side
      if (excess > worst.excess) worst = {excess <= 1.0, k, i, a, d.numeric, d.rounding, excess, ""};
    }
  }
  if (worst.index < 0) worst = {};
  worst.message = describe(worst, options);
  if (!worst.passed && options.raise_exception) throw Error(worst.message);
  return worst;
}

}  // namespace minidl::autograd
