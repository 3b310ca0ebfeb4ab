// Writing a new layer: ScaleNorm (scale_norm.hpp), defined outside the
// library, checked against finite differences and against its composite of primitive
// ops, then trained inside a small model with the library's Linear, Tanh, cross_entropy
// and SGD. Exits 1 when a check fails.
#include <cstdio>
#include <iostream>
#include <memory>

#include "minidl/autograd/gradcheck.hpp"
#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/sequential.hpp"
#include "minidl/ops/cross_entropy.hpp"
#include "minidl/optim/sgd.hpp"
#include "scale_norm.hpp"

using namespace minidl;

int main() {
  Generator gen(0);

  // 1. The fused backward against central differences (x and g), and against the composite.
  const Tensor x = Tensor::randn({4, 6}, gen), g = Tensor::from_vector({1.7f});
  const autograd::GradcheckReport check =
      autograd::gradcheck([](const std::vector<Tensor>& in) { return custom::scale_norm(in[0], in[1]); },
                          {x.clone(), g.clone()}, {.raise_exception = false});
  const Tensor fused = custom::scale_norm(x, g), composite = custom::scale_norm_composite(x, g);
  double forward_error = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i)
    forward_error = std::max(forward_error, double(std::abs(fused.data()[i] - composite.data()[i])));
  std::printf("%s\n", check.message.c_str());
  std::printf("fused vs composite forward: max |diff| %.2e (%s)\n", forward_error,
              forward_error < 1e-5 ? "ok" : "FAILED");

  // 2. In a model: Linear -> ScaleNorm -> Tanh -> Linear on a synthetic 4-class problem
  //    (the class is the argmax of a fixed random projection of the input).
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(16, 32, gen),
                                                std::make_shared<custom::ScaleNorm>(32), std::make_shared<nn::Tanh>(),
                                                std::make_shared<nn::Linear>(32, 4, gen));
  std::cout << *model << "\n";  // the module tree, as PyTorch's print(model)
  const Tensor inputs = Tensor::randn({256, 16}, gen);
  const Tensor targets = argmax(matmul(inputs, Tensor::randn({16, 4}, gen)), 1);
  optim::SGD sgd(model->parameters(), {.lr = 0.1});
  float first = 0.0f, last = 0.0f;
  for (int step = 0; step < 200; ++step) {
    model->zero_grad();
    Tensor loss = cross_entropy((*model)(inputs), targets);
    loss.backward();
    sgd.step();
    if (step == 0) first = loss.item();
    last = loss.item();
    if (step % 50 == 0 || step == 199) std::printf("step %3d  loss %.4f\n", step, loss.item());
  }
  const bool learned = last < 0.5f * first;
  std::printf("loss %.4f -> %.4f (%s)\n", first, last, learned ? "ok" : "FAILED");
  return check.passed && forward_error < 1e-5 && learned ? 0 : 1;
}
