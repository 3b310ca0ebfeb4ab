#pragma once
// gradcheck: backprop against central differences, PyTorch's torch.autograd.gradcheck for
// minidl's float32 tensors. A layer written outside the library is checked the same way as
// one inside:
//
//   auto f = [](const std::vector<Tensor>& in) { return my_op(in[0], in[1]); };
//   autograd::gradcheck(f, {x, w});  // throws, naming the worst element, if backward is wrong
//
// Instead of the whole Jacobian, it checks the gradient of sum(f(inputs) * v) for one fixed
// random v (every output element counts), so it costs two evaluations of f per input element.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::autograd {

/// torch.autograd.gradcheck's eps, atol and rtol, with defaults sized for float32 (torch's
/// eps = 1e-6, atol = 1e-5, rtol = 1e-3 assume float64), and an allowance for the rounding of
/// f's float32 outputs, which float64 makes negligible and float32 does not. An element passes
/// when
///   |analytic - numeric| <= atol + rtol |numeric| + rounding,
///   rounding = rounding_ulps * 2^-24 * sum_j (|f_j(x + h) v_j| + |f_j(x - h) v_j|) / 2h
/// over the outputs f_j that the element moves (docs/writing-a-layer.md derives it). atol and
/// rtol then cover only the truncation of the differences (h^2 |F'''| / 6) and the analytic
/// side's own rounding, so a right backward passes on every CPU and summation order.
struct GradcheckOptions {
  double eps = 1e-2;            // the central differences' step
  double atol = 1e-4;           // absolute tolerance
  double rtol = 1e-3;           // relative tolerance, against |numeric|
  double rounding_ulps = 8.0;   // each output's rounding error, in units of 2^-24 |f_j|
  bool raise_exception = true;  // throw minidl::Error on a failure (else: only the report)
  uint64_t seed = 1234;         // draws the projection v
};

/// The element furthest past its tolerance (or, when all pass, closest to it).
struct GradcheckReport {
  bool passed = true;
  size_t input = 0;    // which input
  int64_t index = -1;  // flat index in it; -1 when no input has an element
  double analytic = 0.0, numeric = 0.0;
  double rounding = 0.0;  // the allowance for the rounding of the outputs the element moved
  double excess = 0.0;    // |analytic - numeric| / (atol + rtol |numeric| + rounding): > 1 fails
  std::string message;    // "gradcheck passed/failed: input 0, element 5 (flat) ..."
  explicit operator bool() const { return passed; }
};

using GradcheckFunction = std::function<Tensor(const std::vector<Tensor>&)>;

/// Checks f's backward with respect to every input (each is made to require grad; f must
/// not change them). The numeric side sums f's outputs and takes the differences in
/// double, over the step the float inputs really took. A NaN on either side fails.
GradcheckReport gradcheck(const GradcheckFunction& f, std::vector<Tensor> inputs, const GradcheckOptions& options = {});

}  // namespace minidl::autograd
