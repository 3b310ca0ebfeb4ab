#include "minidl/autograd/gradcheck.hpp"

#include <cmath>
#include <limits>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::autograd {
namespace {

// sum(f(inputs) * v) in double, without recording a graph.
double projected(const GradcheckFunction& f, const std::vector<Tensor>& inputs, const Tensor& v) {
  NoGradGuard no_grad;
  const Tensor y = f(inputs);
  if (y.shape() != v.shape())
    throw Error(cat("gradcheck: f's output changed shape from ", to_string(v.shape()), " to ", to_string(y.shape())));
  double total = 0.0;
  for (int64_t i = 0; i < y.numel(); ++i) total += double(y.data()[i]) * double(v.data()[i]);
  return total;
}

// d/dx_i of sum(f * v) by central differences; x_i is restored afterwards.
double central_difference(const GradcheckFunction& f, const std::vector<Tensor>& inputs, const Tensor& v, float& x,
                          double eps) {
  const float saved = x;
  const float up = float(double(saved) + eps), down = float(double(saved) - eps);
  x = up;
  const double f_up = projected(f, inputs, v);
  x = down;
  const double f_down = projected(f, inputs, v);
  x = saved;
  return (f_up - f_down) / (double(up) - double(down));
}

std::string describe(const GradcheckReport& r, const GradcheckOptions& o) {
  if (r.index < 0) return "gradcheck passed: no input elements";
  return cat("gradcheck ", r.passed ? "passed" : "failed", ": worst element is input ", r.input, ", element ", r.index,
             " (flat): analytic ", r.analytic, ", numeric ", r.numeric, ", |diff| ", std::abs(r.analytic - r.numeric),
             " against atol + rtol * |numeric| = ", o.atol + o.rtol * std::abs(r.numeric), " (eps ", o.eps, ", atol ",
             o.atol, ", rtol ", o.rtol, ")");
}

}  // namespace

GradcheckReport gradcheck(const GradcheckFunction& f, std::vector<Tensor> inputs, const GradcheckOptions& options) {
  if (!(options.eps > 0.0) || options.atol < 0.0 || options.rtol < 0.0)
    throw Error(cat("gradcheck: expected eps > 0, atol >= 0 and rtol >= 0, got eps ", options.eps, ", atol ",
                    options.atol, ", rtol ", options.rtol));
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
      const double n = central_difference(f, inputs, v, inputs[k].data()[i], options.eps);
      const double bound = options.atol + options.rtol * std::abs(n);
      const double diff = std::abs(a - n);
      double excess = diff == 0.0 ? 0.0 : diff / bound;                          // bound 0: infinity
      if (std::isnan(excess)) excess = std::numeric_limits<double>::infinity();  // a NaN on either side
      if (excess > worst.excess) worst = {excess <= 1.0, k, i, a, n, excess, ""};
    }
  }
  if (worst.index < 0) worst = {};
  worst.message = describe(worst, options);
  if (!worst.passed && options.raise_exception) throw Error(worst.message);
  return worst;
}

}  // namespace minidl::autograd
