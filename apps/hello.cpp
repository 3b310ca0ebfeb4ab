// Placeholder app while the digits demo is built: shows a forward and backward pass.
#include <iostream>

#include "minidl/minidl.hpp"

int main() {
  using namespace minidl;
  Generator gen(0);
  Tensor w = Tensor::randn({3, 2}, gen).requires_grad_();
  Tensor x = Tensor::ones({4, 3});
  Tensor loss = mean(tanh(matmul(x, w)));
  loss.backward();
  std::cout << "loss " << loss << "\ngrad " << w.grad() << "\n";
}
