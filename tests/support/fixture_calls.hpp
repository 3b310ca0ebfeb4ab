#pragma once
// Fixtures of ops with several inputs or several outputs (scripts/fixtures/sequence.py):
// inputs `input` or `input0`, `input1`, ...; outputs `output` or `output0`, ... each with its
// `grad_output<i>`; gradients of the sum over outputs of sum(output_i * grad_output_i).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/fixture.hpp"

namespace minidl::testing {

/// The names `base` (when the fixture has it) or base0, base1, ... as far as they go.
inline std::vector<std::string> numbered_names(const Fixture& fx, const std::string& base) {
  if (fx.has(base)) return {base};
  std::vector<std::string> names;
  while (fx.has(base + std::to_string(names.size()))) names.push_back(base + std::to_string(names.size()));
  return names;
}

/// check_close, where an infinite expected entry passes when actual holds the same infinity
/// (check_close's difference of two equal infinities is NaN): masked scores hold -inf.
inline void check_close_with_infinities(const Tensor& actual, const Tensor& expected, double atol = kFixtureAtol,
                                        double rtol = kFixtureRtol) {
  REQUIRE(actual.shape() == expected.shape());
  Tensor a = actual.detach().clone(), e = expected.detach().clone();
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::isinf(e.data()[i]) && a.data()[i] == e.data()[i]) a.data()[i] = e.data()[i] = 0.0f;
  check_close(a, e, atol, rtol);
}

using MultiCall = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Runs f on copies of the fixture's inputs, then backward as the generator did, and compares
/// every output and every input gradient within atol + rtol |expected|.
inline void check_multi_call(const Fixture& fx, const MultiCall& f, double atol = kFixtureAtol,
                             double rtol = kFixtureRtol) {
  const std::vector<std::string> input_names = numbered_names(fx, "input");
  const std::vector<std::string> output_names = numbered_names(fx, "output");
  REQUIRE(!input_names.empty());
  std::vector<Tensor> inputs;
  for (const std::string& name : input_names) inputs.push_back(fx[name].clone().requires_grad_(true));
  const std::vector<Tensor> outputs = f(inputs);
  REQUIRE(outputs.size() == output_names.size());
  Tensor total = Tensor::scalar(0.0f);
  for (size_t i = 0; i < outputs.size(); ++i) {
    INFO(fx.name() << ": " << output_names[i]);
    check_close_with_infinities(outputs[i], fx[output_names[i]], atol, rtol);
    const std::string grad_name = "grad_" + output_names[i];
    total = total + sum(outputs[i] * fx[grad_name]);
  }
  total.backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO(fx.name() << ": " << input_names[i] << ".grad");
    REQUIRE(inputs[i].grad().defined());
    check_close_with_infinities(inputs[i].grad(), fx[input_names[i] + ".grad"], atol, rtol);
  }
}

/// check_multi_call for an op of one input and one output.
inline void check_single_call(const Fixture& fx, const std::function<Tensor(const Tensor&)>& f,
                              double atol = kFixtureAtol, double rtol = kFixtureRtol) {
  check_multi_call(
      fx, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }, atol, rtol);
}

}  // namespace minidl::testing
