// bench_gemm_forms: one row times a matrix (the batch-1 Linear's forward and input gradient)
// in the two forms kernels::gemm can hand it to BLAS (gemm_form.cpp): cblas_sgemm, or
// cblas_sgemv. Per product, both timed in turn, best of the rounds, and the form gemm()'s
// rule picks on this core (a kernel micro-benchmark: minidl_internal).
#include <cstdio>
#include <vector>

#include "gemm_recorder.hpp"
#include "kernels/gemm_form.hpp"
#include "minidl/minidl.hpp"
#include "timing.hpp"

using namespace minidl;
using kernels::GemmForm;

namespace {

struct Product {
  const char* what;
  bool transpose_b;
  int64_t n, k;  // (1, k) op(B), op(B) (k, n)
};

// Microseconds of one product through sgemv or sgemm, best of 20 rounds of many calls.
double product_us(bool gemv, const Product& p, const Tensor& a, const Tensor& b, Tensor& c) {
  const bench::GemmCall call{false, p.transpose_b, 1, p.n, p.k, 0.0f, a.data(), b.data(), c.data(), gemv};
  const int calls = int(std::max<int64_t>(100, 20000000 / (p.n * p.k)));
  const bench::Timing t = bench::best_timing(20, [&] {
    for (int i = 0; i < calls; ++i) bench::replay_gemm(call, a.data(), b.data(), c.data());
  });
  return t.wall / calls * 1e6;
}

}  // namespace

int main() {
  set_num_threads(1);
  Generator gen(0);
  const std::vector<Product> products = {{"forward x W^T, 64 -> 64", true, 64, 64},
                                         {"input gradient g W, 64 -> 64", false, 64, 64},
                                         {"forward x W^T, 64 -> 10", true, 10, 64},
                                         {"forward x W^T, 512 -> 512", true, 512, 512},
                                         {"forward x W^T, 1024 -> 1024", true, 1024, 1024}};
  std::printf("one row, 1 thread: us a product as sgemm and as sgemv, and the rule's choice on this core\n");
  for (const Product& p : products) {
    const Tensor a = Tensor::randn({1, p.k}, gen);
    const Tensor b = Tensor::randn(p.transpose_b ? Shape{p.n, p.k} : Shape{p.k, p.n}, gen);
    Tensor c = Tensor::empty({1, p.n});
    const double as_gemm = product_us(false, p, a, b, c);
    const double as_gemv = product_us(true, p, a, b, c);
    const bool rule_gemv = kernels::choose_gemm_form(false, 1, p.n, p.k) == GemmForm::RowTimesB;
    std::printf("%-30s sgemm %8.3f us  sgemv %8.3f us  sgemm / sgemv %.2fx  rule: %s\n", p.what, as_gemm, as_gemv,
                as_gemm / as_gemv, rule_gemv ? "sgemv" : "sgemm");
  }
}
