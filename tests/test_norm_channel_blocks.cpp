// BatchNorm's (N, C) path in channel blocks (src/kernels/norm/channel_norm.cpp: sums and
// elementwise passes 16 channels at a time for C <= 256, row by row past it) against the
// composite of primitives, on channel counts around the block and the 256 limit and batch
// sizes around a chunk, in training (batch statistics) and eval (running statistics).
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_channel_blocks {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::random_normal;

TEST_CASE("BatchNorm over (N, C) matches its composite on odd channel counts", "[norm][batch_norm][channel_blocks]") {
  for (int64_t channels : {1, 7, 15, 16, 17, 63, 64, 65, 130, 256, 257}) {
    for (int64_t batch : {2, 3, 9, 65}) {
      for (bool training : {true, false}) {
        INFO("x (" << batch << ", " << channels << "), training " << training);
        const Shape shape{batch, channels}, per_channel{channels};
        const uint64_t seed = uint64_t(1000 * channels + batch);
        Tensor rm_fused = random_normal(per_channel, seed), rv_fused = random_normal(per_channel, seed + 1, 1.5f, 0.2f);
        Tensor rm_comp = rm_fused.clone(), rv_comp = rv_fused.clone();
        auto fused = [&](const std::vector<Tensor>& in) {
          return batch_norm(in[0], rm_fused, rv_fused, in[1], in[2], training, 0.1, 1e-5);
        };
        auto comp = [&](const std::vector<Tensor>& in) {
          return composite::batch_norm(in[0], rm_comp, rv_comp, in[1], in[2], training, 0.1, 1e-5);
        };
        const std::vector<Tensor> inputs{random_normal(shape, seed + 2, 0.5f, 2.0f),
                                         random_normal(per_channel, seed + 3, 1.0f, 0.5f),
                                         random_normal(per_channel, seed + 4)};
        const auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(comp, inputs);
        // Sums of at most 65 float32 terms of O(1) in two orders: a few 1e-6 apart; dx also
        // subtracts two such sums.
        for (size_t i = 0; i < a.size(); ++i) {
          INFO("result " << i << " (0 = output, then dx, dweight, dbias)");
          if (i == 0) check_close(a[i], b[i], 2e-5, 1e-5);
          else check_close(a[i], b[i], 5e-5, 1e-4);
        }
        check_close(rm_fused, rm_comp, 1e-6, 1e-6);
        check_close(rv_fused, rv_comp, 1e-6, 1e-6);
      }
    }
  }
}

}  // namespace test_norm_channel_blocks
