#include "minidl/ops/softmax.hpp"

#include <cmath>

#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"

namespace minidl {

Tensor log_softmax(const Tensor& x, int64_t dim) {
  const int64_t d = normalize_dim(dim, x.dim());
  int64_t outer = 1, n = x.dim() == 0 ? 1 : x.size(d), inner = 1;
  for (int64_t k = 0; k < x.dim(); ++k) {
    if (k < d) outer *= x.size(k);
    if (k > d) inner *= x.size(k);
  }
  Tensor out = Tensor::empty(x.shape());
  const float* in = x.data();
  float* o = out.data();
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = a * n * inner + i;
      float top = -INFINITY;
      for (int64_t j = 0; j < n; ++j) top = std::max(top, in[base + j * inner]);
      double total = 0.0;
      for (int64_t j = 0; j < n; ++j) total += std::exp(double(in[base + j * inner] - top));
      // (x - max) - log(total): adding the log to the max first would round it away.
      const auto log_total = float(std::log(total));
      for (int64_t j = 0; j < n; ++j) o[base + j * inner] = (in[base + j * inner] - top) - log_total;
    }
  if (!needs_grad({x})) return out;
  const SavedTensor saved_out = SavedTensor::output(out, "LogSoftmax");
  return record(out, "LogSoftmax", {x}, [saved_out, outer, n, inner](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& saved = saved_out.unpack();
    // dx_j = g_j - softmax_j * sum_k g_k
    Tensor gx = Tensor::empty(saved.shape());
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = a * n * inner + i;
        double total = 0.0;
        for (int64_t j = 0; j < n; ++j) total += g.data()[base + j * inner];
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = base + j * inner;
          gx.data()[k] = g.data()[k] - std::exp(saved.data()[k]) * float(total);
        }
      }
    return {gx};
  });
}

}  // namespace minidl
