#include "minidl/ops/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/dim_copy.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/masking.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// Uniform in [0, 1) with 53 random bits. Generator::uniform's 24 bits would draw a category
// whose weight is below 2^-24 of its row's total (a rare token of a large vocabulary) at the
// wrong rate, or never.
double uniform53(Generator& generator) {
  const uint64_t high = generator.next_u32() >> 5, low = generator.next_u32() >> 6;  // 27 + 26 bits
  return (double(high) * 67108864.0 + double(low)) / 9007199254740992.0;
}

// One index drawn in proportion to `weights` (total: their sum, > 0).
int64_t draw_one(const std::vector<double>& weights, double total, Generator& generator) {
  const double target = uniform53(generator) * total;
  double cumulative = 0.0;
  int64_t last_positive = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) continue;
    cumulative += weights[i];
    last_positive = int64_t(i);
    if (cumulative > target) return last_positive;
  }
  return last_positive;  // target rounded up to the total
}

// A row's weights in double, after checking they are finite, >= 0 and of positive sum; the
// count of positive ones must cover the draws without replacement.
std::vector<double> checked_row(const Tensor& probs, int64_t row, int64_t num_samples, bool replacement) {
  const int64_t n = probs.size(-1);
  const float* p = probs.data() + row * n;
  std::vector<double> weights(p, p + n);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i]) || p[i] < 0.0f)
      throw Error(cat("multinomial: expected finite probabilities >= 0, got ", p[i], " at index ", i, " of row ", row,
                      " (shape ", to_string(probs.shape()), ")"));
  const auto positive = std::count_if(weights.begin(), weights.end(), [](double w) { return w > 0.0; });
  if (positive == 0)
    throw Error(cat("multinomial: expected a row of probabilities with a positive sum, row ", row, " sums to 0 (shape ",
                    to_string(probs.shape()), ")"));
  if (!replacement && positive < num_samples)
    throw Error(cat("multinomial: cannot draw ", num_samples, " samples without replacement from row ", row,
                    ", which has ", positive, " categories of positive probability (shape ", to_string(probs.shape()),
                    ")"));
  return weights;
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& generator) {
  if (probs.dim() != 1 && probs.dim() != 2)
    throw Error(cat("multinomial: expected probabilities of shape (V) or (B, V), got ", to_string(probs.shape())));
  if (num_samples <= 0) throw Error(cat("multinomial: expected num_samples > 0, got ", num_samples));
  const int64_t rows = probs.dim() == 1 ? 1 : probs.size(0), n = probs.size(-1);
  if (!replacement && num_samples > n)
    throw Error(cat("multinomial: cannot draw ", num_samples, " samples without replacement from ", n,
                    " categories (shape ", to_string(probs.shape()), ")"));
  Tensor out = Tensor::empty(probs.dim() == 1 ? Shape{num_samples} : Shape{rows, num_samples});
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> weights = checked_row(probs, r, num_samples, replacement);
    for (int64_t s = 0; s < num_samples; ++s) {
      const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
      const int64_t drawn = draw_one(weights, total, generator);
      out.data()[r * num_samples + s] = float(drawn);
      if (!replacement) weights[size_t(drawn)] = 0.0;  // drawn once, never again
    }
  }
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  return multinomial(probs, num_samples, replacement, default_generator());
}

namespace {

// Whether a comes before b in topk's order: larger (smaller) first, NaN the largest.
bool comes_first(float a, float b, bool largest) {
  if (largest) return (std::isnan(a) && !std::isnan(b)) || a > b;
  return (!std::isnan(a) && std::isnan(b)) || a < b;
}

}  // namespace

TopK topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  if (x.dim() == 0) throw Error("topk: expected a tensor with at least one dim, got a scalar (shape [])");
  const int64_t d = normalize_dim(dim, x.dim());
  const kernels::DimLayout l = kernels::layout_around(x.shape(), d);
  if (k < 0 || k > l.extent)
    throw Error(cat("topk: expected 0 <= k <= ", l.extent, " (the size of dim ", d, " of shape ", to_string(x.shape()),
                    "), got k = ", k));
  Shape shape = x.shape();
  shape[size_t(d)] = k;
  TopK result{Tensor::empty(shape), Tensor::empty(shape)};  // each (outer, k, inner)
  std::vector<int64_t> order(size_t(l.extent));
  for (int64_t a = 0; a < l.outer; ++a)
    for (int64_t i = 0; i < l.inner; ++i) {
      const float* line = x.data() + a * l.extent * l.inner + i;  // entries inner apart
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t p, int64_t q) {
        const float vp = line[p * l.inner], vq = line[q * l.inner];
        if (comes_first(vp, vq, largest)) return true;
        return !comes_first(vq, vp, largest) && p < q;  // equal: index order
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (a * k + j) * l.inner + i;
        result.values.data()[at] = line[order[size_t(j)] * l.inner];
        result.indices.data()[at] = float(order[size_t(j)]);
      }
    }
  if (!needs_grad({x})) return result;
  const SavedTensor saved_indices(result.indices);  // refuses the backward if the caller wrote into them
  result.values = record(result.values, "Topk", {x},
                         [saved_indices, l, k, x_shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
                           const Tensor& indices = saved_indices.unpack();
                           Tensor gx = Tensor::zeros(x_shape);  // entries not picked get 0
                           for (int64_t a = 0; a < l.outer; ++a)
                             for (int64_t j = 0; j < k; ++j)
                               for (int64_t i = 0; i < l.inner; ++i) {
                                 const int64_t at = (a * k + j) * l.inner + i;
                                 const auto picked = int64_t(indices.data()[at]);
                                 gx.data()[(a * l.extent + picked) * l.inner + i] += g.data()[at];
                               }
                           return {gx};
                         });
  return result;
}

Tensor top_k_filter(const Tensor& logits, int64_t k) {
  if (logits.dim() == 0 || k < 1 || k > logits.size(-1))
    throw Error(cat("top_k_filter: expected 1 <= k <= the size of the last dim of shape ", to_string(logits.shape()),
                    ", got k = ", k));
  const Tensor largest = topk(logits.detach(), k).values;  // (..., k): the row's k-th is its last
  Tensor below = Tensor::empty(logits.shape());            // the mask: 1 below the row's k-th
  const int64_t n = logits.size(-1);
  for (int64_t i = 0; i < logits.numel(); ++i) {
    const float kth = largest.data()[(i / n) * k + k - 1];
    below.data()[i] = logits.data()[i] < kth ? 1.0f : 0.0f;
  }
  return masked_fill(logits, below, -INFINITY);
}

}  // namespace minidl
