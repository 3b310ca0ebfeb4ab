// The fused row norms + Tanh (minidl::layer_norm_tanh, rms_norm_tanh, group_norm_tanh, and
// nn::Sequential's use of them) against the two ops apart, their reference: the same bits in
// values and in every gradient.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "minidl/autograd/node.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.shape() != b.shape()) return false;
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  return std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("layer_norm_tanh gives tanh(layer_norm(...))'s bits, forward and backward", "[norm][layer_norm_tanh]") {
  Generator gen(21);
  for (int affine = 0; affine < 3; ++affine) {  // weight and bias, weight only, neither
    for (Shape shape : {Shape{37, 20}, Shape{1, 64}, Shape{20}, Shape{3, 5, 20}}) {
      INFO("affine " << affine << ", input " << to_string(shape));
      const Tensor x0 = Tensor::randn(shape, gen, 0.5f, 2.0f);
      const Tensor w0 = affine < 2 ? Tensor::randn({shape.back()}, gen, 1.0f, 0.5f) : Tensor();
      const Tensor b0 = affine == 0 ? Tensor::randn({shape.back()}, gen) : Tensor();
      const Tensor weights = Tensor::randn(shape, gen);  // the loss: sum(y * weights)
      std::vector<Tensor> results[2];
      for (int fused = 0; fused < 2; ++fused) {
        Tensor x = x0.detach().requires_grad_();
        Tensor w = w0.defined() ? w0.detach().requires_grad_() : Tensor();
        Tensor b = b0.defined() ? b0.detach().requires_grad_() : Tensor();
        const Shape normalized{shape.back()};
        Tensor y = fused ? layer_norm_tanh(x, normalized, w, b) : tanh(layer_norm(x, normalized, w, b));
        sum(mul(y, weights)).backward();
        results[fused] = {y.detach(), x.grad(), w.defined() ? w.grad() : Tensor(), b.defined() ? b.grad() : Tensor()};
        if (fused) CHECK(y.grad_fn()->name == "NativeLayerNormTanh");
      }
      for (size_t i = 0; i < results[0].size(); ++i) {
        INFO("result " << i << " (output, dx, dweight, dbias)");
        CHECK(same_bits(results[1][i], results[0][i]));
      }
    }
  }
}

TEST_CASE("rms_norm_tanh and group_norm_tanh give the bits of their norm, then tanh", "[norm][layer_norm_tanh]") {
  Generator gen(22);
  const Tensor x0 = Tensor::randn({6, 8, 3}, gen, 0.5f, 2.0f);  // (N, C, positions) for GroupNorm(4, 8)
  const Tensor w0 = Tensor::randn({8}, gen, 1.0f, 0.5f), b0 = Tensor::randn({8}, gen);
  const Tensor rms_w0 = Tensor::randn({3}, gen, 1.0f, 0.5f);
  const Tensor weights = Tensor::randn({6, 8, 3}, gen);
  for (int op = 0; op < 2; ++op) {
    INFO((op == 0 ? "rms_norm_tanh" : "group_norm_tanh"));
    std::vector<Tensor> results[2];
    for (int fused = 0; fused < 2; ++fused) {
      Tensor x = x0.detach().requires_grad_();
      Tensor w = (op == 0 ? rms_w0 : w0).detach().requires_grad_(), b = b0.detach().requires_grad_();
      Tensor y = op == 0 ? (fused ? rms_norm_tanh(x, {3}, w) : tanh(rms_norm(x, {3}, w)))
                         : (fused ? group_norm_tanh(x, 4, w, b) : tanh(group_norm(x, 4, w, b)));
      sum(mul(y, weights)).backward();
      results[fused] = {y.detach(), x.grad(), w.grad(), op == 1 ? b.grad() : Tensor()};
      if (fused) CHECK(y.grad_fn()->name == (op == 0 ? "RMSNormTanh" : "NativeGroupNormTanh"));
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      INFO("result " << i << " (output, dx, dweight, dbias)");
      CHECK(same_bits(results[1][i], results[0][i]));
    }
  }
}

TEST_CASE("layer_norm_tanh checks its shapes as layer_norm does", "[norm][layer_norm_tanh]") {
  const Tensor x = Tensor::zeros({4, 6});
  CHECK_THROWS_WITH(layer_norm_tanh(x, {5}, Tensor(), Tensor()),
                    "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[4, 6]");
  CHECK_THROWS_WITH(layer_norm_tanh(x, {6}, Tensor::ones({5}), Tensor()),
                    "layer_norm: expected weight of shape [6] for an input of shape [4, 6], got [5]");
}

TEST_CASE("Sequential runs a row norm + Tanh as one op, with the bits of the modules apart", "[nn][layer_norm_tanh]") {
  Generator gen(4);
  auto net = std::make_shared<nn::Sequential>();
  const std::vector<std::shared_ptr<nn::Module>> norms{
      std::make_shared<nn::LayerNorm>(16), std::make_shared<nn::RMSNorm>(16), std::make_shared<nn::GroupNorm>(4, 16)};
  for (int block = 0; block < 3; ++block) {
    net->push_back(std::make_shared<nn::Linear>(block == 0 ? 12 : 16, 16, gen));
    net->push_back(norms[size_t(block)]);
    net->push_back(std::make_shared<nn::Tanh>());
  }
  net->push_back(std::make_shared<nn::Linear>(16, 3, gen));
  {  // parameters away from LayerNorm's ones and zeros, so a wrong weight or bias shows
    NoGradGuard no_grad;
    for (Tensor p : net->parameters()) p.copy_(add(p, Tensor::randn(p.shape(), gen, 0.0f, 0.1f)));
  }
  const Tensor x0 = Tensor::randn({9, 12}, gen);
  const Tensor weights = Tensor::randn({9, 3}, gen);
  std::vector<Tensor> results[2];
  for (int fused = 0; fused < 2; ++fused) {
    net->zero_grad();
    Tensor x = x0.detach().requires_grad_();
    Tensor out = fused ? net->forward(x) : net->forward_unfused(x);
    // The last Linear's input: the third block's GroupNorm and Tanh, one node when fused.
    const Node& last = *out.grad_fn();
    REQUIRE(last.inputs[0]);
    CHECK(last.inputs[0]->grad_fn->name == (fused ? "NativeGroupNormTanh" : "Tanh"));
    sum(mul(out, weights)).backward();
    results[fused] = {out.detach(), x.grad()};
    for (const Tensor& p : net->parameters()) results[fused].push_back(p.grad());
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    INFO("result " << i << " (output, dx, then each parameter's gradient)");
    CHECK(same_bits(results[1][i], results[0][i]));
  }
  // A hook on the Tanh sees its input, which the fused op never makes: then they run apart.
  int calls = 0;
  auto handle =
      net->at<nn::Tanh>(2).register_forward_hook([&calls](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  (void)net->forward(x0);
  CHECK(calls == 1);
}
