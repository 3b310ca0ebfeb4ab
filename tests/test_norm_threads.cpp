// The fused norm kernels give the same bits whatever the OpenMP thread count: every
// output and every parameter-gradient sum is computed by one thread in a fixed order.
#include <omp.h>

#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_threads {

using namespace minidl;

namespace {

// Output, dx, dweight, dbias of f on sizes large enough to run in parallel.
std::vector<std::vector<float>> run_with_threads(int threads,
                                                 const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                 const std::vector<Tensor>& inputs) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<Tensor> results = minidl::testing::gradients(f, inputs);
  omp_set_num_threads(saved);
  std::vector<std::vector<float>> values;
  for (const Tensor& t : results) values.push_back(t.to_vector());
  return values;
}

void check_same_bits(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs) {
  auto one = run_with_threads(1, f, inputs);
  auto two = run_with_threads(2, f, inputs);
  REQUIRE(one.size() == two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    INFO("result " << i << " (0 = output, then the gradients)");
    CHECK(one[i] == two[i]);  // exact equality: bit-identical floats
  }
}

Tensor random_like(const Shape& shape, uint64_t seed) {
  return minidl::testing::random_normal(shape, seed, 1.0f, 2.0f);
}

}  // namespace

TEST_CASE("Norm kernels give identical bits with 1 and 2 threads", "[norm][threads]") {
  SECTION("LayerNorm (300, 1100)") {  // 3 chunks of weight-gradient sums
    check_same_bits([](const std::vector<Tensor>& in) { return layer_norm(in[0], {1100}, in[1], in[2]); },
                    {random_like({300, 1100}, 1), random_like({1100}, 2), random_like({1100}, 3)});
  }
  SECTION("RMSNorm (300, 256)") {
    check_same_bits([](const std::vector<Tensor>& in) { return rms_norm(in[0], {256}, in[1]); },
                    {random_like({300, 256}, 4), random_like({256}, 5)});
  }
  SECTION("GroupNorm (8, 32, 400), 4 groups") {
    check_same_bits([](const std::vector<Tensor>& in) { return group_norm(in[0], 4, in[1], in[2]); },
                    {random_like({8, 32, 400}, 6), random_like({32}, 7), random_like({32}, 8)});
  }
  for (bool training : {true, false}) {
    SECTION(std::string("BatchNorm (256, 1100) and (8, 32, 400), training ") + (training ? "on" : "off")) {
      for (Shape shape : {Shape{256, 1100}, Shape{8, 32, 400}}) {  // (N, C): 3 blocks of 512 channels
        const int64_t c = shape[1];
        Tensor running_mean = random_like({c}, 9), running_var = Tensor::full({c}, 2.0f);
        check_same_bits(
            [&](const std::vector<Tensor>& in) {
              return batch_norm(in[0], running_mean, running_var, in[1], in[2], training, 0.1, 1e-5);
            },
            {random_like(shape, 10), random_like({c}, 11), random_like({c}, 12)});
      }
    }
  }
}

}  // namespace test_norm_threads
