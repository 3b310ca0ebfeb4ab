#pragma once
// A layer written OUTSIDE the library, as a user would: ScaleNorm (Nguyen & Salazar,
// "Transformers without Tears", 2019), y = g * x / sqrt(sum(x^2) + eps) over the last dim,
// with one learnable scalar g. It shows the three steps of "Writing a new layer":
//   1. a fused op: compute the result with plain loops, save what the backward needs
//      (SavedTensor: its in-place check), and hand record() a closure that maps the
//      output gradient to input gradients;
//   2. a Module that registers its parameter and calls the op in forward();
//   3. a gradient check against central differences: the library's autograd::gradcheck.
// Header-only so that custom_layer.cpp and tests/test_custom_layer.cpp share it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "minidl/minidl.hpp"

namespace custom {

using namespace minidl;

/// x (*, D), g (1): y = g * x * rstd per row, rstd = 1 / sqrt(sum(x^2) + eps).
inline Tensor scale_norm(const Tensor& x, const Tensor& g, double eps = 1e-5) {
  if (x.dim() < 1 || g.shape() != Shape{1})
    throw Error(cat("scale_norm: expected x (*, D) and g of shape [1], got ", to_string(x.shape()), " and ",
                    to_string(g.shape())));
  const int64_t d = x.size(-1), rows = d == 0 ? 0 : x.numel() / d;
  Tensor out = Tensor::empty(x.shape());  // (rows, D)
  Tensor rstd = Tensor::empty({rows});    // (rows), saved for the backward
  const float gain = g.data()[0];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * d;
    double squares = 0.0;
    for (int64_t i = 0; i < d; ++i) squares += double(xr[i]) * xr[i];
    const float s = float(1.0 / std::sqrt(squares + eps));
    rstd.data()[r] = s;
    for (int64_t i = 0; i < d; ++i) out.data()[r * d + i] = gain * xr[i] * s;
  }
  // Backward, per row with gy = g * dy:  dx = rstd * (gy - x * rstd^2 * sum(gy * x)),
  // and dg = sum over everything of dy * x * rstd. Capture x and g as SavedTensors (never
  // out itself): unpack() throws if they were written in place before the backward runs.
  return record(out, "ScaleNorm", {x, g}, [sx = SavedTensor(x), sg = SavedTensor(g), rstd, d, rows](const Tensor& dy) {
    const Tensor& x = sx.unpack();
    const Tensor& g = sg.unpack();
    Tensor dx = Tensor::empty(x.shape());
    double dg = 0.0;
    const float gain = g.data()[0];
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * d;
      const float* dyr = dy.data() + r * d;
      const float s = rstd.data()[r];
      double dot = 0.0;  // sum(dy * x) over the row
      for (int64_t i = 0; i < d; ++i) dot += double(dyr[i]) * xr[i];
      dg += dot * s;
      const float k = float(gain * dot * s * s);
      for (int64_t i = 0; i < d; ++i) dx.data()[r * d + i] = s * (gain * dyr[i] - xr[i] * k);
    }
    return std::vector<Tensor>{dx, Tensor::from_vector({float(dg)})};
  });
}

/// The same layer from primitive ops: the readable version, and a second reference.
inline Tensor scale_norm_composite(const Tensor& x, const Tensor& g, double eps = 1e-5) {
  return x * rsqrt(sum(x * x, {-1}, /*keepdim=*/true) + float(eps)) * g;
}

/// ScaleNorm(features): one parameter "g", initialised to sqrt(features) as in the paper.
class ScaleNorm : public nn::Module {
 public:
  explicit ScaleNorm(int64_t features, double eps = 1e-5) : features_(features), eps_(eps) {
    g = register_parameter("g", Tensor::full({1}, float(std::sqrt(double(features)))));
  }
  Tensor forward(const Tensor& x) override {
    if (x.dim() < 1 || x.size(-1) != features_)
      throw Error(
          cat("ScaleNorm(", features_, "): expected input of shape [*, ", features_, "], got ", to_string(x.shape())));
    return scale_norm(x, g, eps_);
  }
  std::string type_name() const override { return "ScaleNorm"; }
  std::string extra_repr() const override { return cat(features_, ", eps=", nn::python_float(eps_)); }

  Tensor g;  // (1)

 private:
  int64_t features_;
  double eps_;
};

}  // namespace custom
