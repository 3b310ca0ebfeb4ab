// Uses an installed minidl: a matmul (OpenBLAS), an elementwise op (OpenMP) and backward.
// The `consumer` test checks the two lines it prints.
#include <iostream>

#include "minidl/minidl.hpp"

int main() {
  using namespace minidl;
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});                   // (2, 3)
  Tensor b = Tensor::from_vector({1, 0, 0, 1, 1, 1}, {3, 2}).requires_grad_();  // (3, 2)
  // a @ b = [[4, 5], [10, 11]]; relu leaves it as is; the sum is 30.
  Tensor loss = sum(relu(matmul(a, b)));
  loss.backward();
  // d loss / d b[k][j] = sum_i a[i][k]: rows 5, 7, 9.
  std::cout << "loss " << loss.item() << "\ngrad";
  for (float g : b.grad().to_vector()) std::cout << " " << g;
  std::cout << "\n";
}
