// The fused Linear + Tanh (minidl::linear_tanh, and nn::Sequential's use of it) against the
// two ops apart, its reference: the same bits in values and in every gradient.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "kernels/column_sums.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  return std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0;
}

// An 8 x [Linear(n, 64), Tanh] + Linear(64, 10) net as the lesson's no-norm run builds it.
std::shared_ptr<nn::Sequential> deep_tanh_net(int64_t in, bool bias) {
  Generator gen(3);
  auto net = std::make_shared<nn::Sequential>();
  for (int layer = 0; layer < 8; ++layer) {
    net->push_back(std::make_shared<nn::Linear>(nn::LinearOptions(layer == 0 ? in : 64, 64).bias(bias), gen));
    net->push_back(std::make_shared<nn::Tanh>());
  }
  net->push_back(std::make_shared<nn::Linear>(64, 10, gen));
  return net;
}

// Output and every gradient (input, then each parameter) of sum(out * weights).
std::vector<Tensor> run(nn::Sequential& net, const Tensor& x, bool fused) {
  net.zero_grad();
  Tensor input = x.detach().requires_grad_();
  Tensor out = fused ? net.forward(input) : net.forward_unfused(input);
  Generator gen(11);
  const Tensor weights = Tensor::randn(out.shape(), gen);
  sum(mul(out, weights)).backward();
  std::vector<Tensor> all{out.detach(), input.grad()};
  for (const Tensor& p : net.parameters()) all.push_back(p.grad());
  return all;
}

}  // namespace

TEST_CASE("linear_tanh gives tanh(linear(...))'s bits, forward and backward", "[nn][linear_tanh]") {
  Generator gen(5);
  for (bool with_bias : {true, false}) {
    for (Shape shape : {Shape{37, 20}, Shape{1, 20}, Shape{20}, Shape{3, 5, 20}}) {
      INFO("bias " << with_bias << ", input " << to_string(shape));
      const Tensor x0 = Tensor::randn(shape, gen, 0.0f, 2.0f);
      const Tensor w0 = Tensor::randn({300, 20}, gen, 0.0f, 0.3f);  // 300 outputs: two column blocks
      const Tensor b0 = with_bias ? Tensor::randn({300}, gen) : Tensor();
      Shape out_shape = shape;
      out_shape.back() = 300;
      const Tensor weights = Tensor::randn(out_shape, gen);  // the loss: sum(y * weights)
      std::vector<Tensor> results[2];
      for (int fused = 0; fused < 2; ++fused) {
        Tensor x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_();
        Tensor b = with_bias ? b0.detach().requires_grad_() : Tensor();
        Tensor y = fused ? linear_tanh(x, w, b) : tanh(linear(x, w, b));
        sum(mul(y, weights)).backward();
        results[fused] = {y.detach(), x.grad(), w.grad()};
        if (with_bias) results[fused].push_back(b.grad());
        if (fused && shape.size() == 2) CHECK(y.grad_fn()->name == "LinearTanh");  // else a View of it
      }
      for (size_t i = 0; i < results[0].size(); ++i) {
        INFO("result " << i << " (output, dx, dW, db)");
        CHECK(same_bits(results[1][i], results[0][i]));
      }
    }
  }
}

TEST_CASE("tanh_backward_column_sums is tanh's backward then column_sums", "[kernels][linear_tanh]") {
  Generator gen(9);
  const Tensor dout = Tensor::randn({70, 300}, gen), y = tanh(Tensor::randn({70, 300}, gen));
  std::vector<float> dpre(70 * 300), dbias(300), plain(70 * 300), plain_bias(300);
  minidl::kernels::tanh_backward_column_sums(dpre.data(), dbias.data(), dout.data(), y.data(), 70, 300);
  const float* g = dout.data();
  const float* yv = y.data();
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = g[i] * (1.0f - yv[i] * yv[i]);
  minidl::kernels::column_sums(plain.data(), 70, 300, plain_bias.data());
  CHECK(std::memcmp(dpre.data(), plain.data(), plain.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(dbias.data(), plain_bias.data(), plain_bias.size() * sizeof(float)) == 0);
}

TEST_CASE("Sequential fuses Linear + Tanh with the unfused path's bits", "[nn][linear_tanh]") {
  Generator gen(4);
  const Tensor x = Tensor::randn({64, 64}, gen);
  for (bool bias : {true, false}) {
    auto net = deep_tanh_net(64, bias);
    const std::vector<Tensor> fused = run(*net, x, true), plain = run(*net, x, false);
    REQUIRE(fused.size() == plain.size());
    for (size_t i = 0; i < fused.size(); ++i) {
      INFO("bias " << bias << ", result " << i << " (output, input grad, then parameters' grads)");
      CHECK(same_bits(fused[i], plain[i]));
    }
  }
  auto net = deep_tanh_net(64, true);
  CHECK(net->forward(x).grad_fn()->name == "Linear");  // the last Linear stands alone
}

TEST_CASE("Sequential does not fuse a Linear or Tanh with a hook: the hook sees its own output", "[nn][linear_tanh]") {
  Generator gen(6);
  auto linear = std::make_shared<nn::Linear>(8, 4, gen);
  auto tanh_module = std::make_shared<nn::Tanh>();
  nn::Sequential net(linear, tanh_module);
  const Tensor x = Tensor::randn({2, 8}, gen);
  CHECK(net.forward(x).grad_fn()->name == "LinearTanh");  // without hooks: fused
  Tensor seen;
  linear->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& y) { seen = y; });
  const Tensor out = net.forward(x);
  REQUIRE(seen.defined());
  CHECK(same_bits(seen, linear->forward(x)));
  CHECK(out.grad_fn()->name == "Tanh");
  CHECK(same_bits(out, tanh(linear->forward(x))));
}

TEST_CASE("Sequential fuses Linear + Tanh again once their hooks are removed", "[nn][linear_tanh]") {
  Generator gen(7);
  nn::Sequential net(nn::Linear(8, 4, gen), nn::Tanh());
  const Tensor x = Tensor::randn({2, 8}, gen);
  RemovableHandle pre = net[1]->register_forward_pre_hook([](nn::Module&, const Tensor&) {});
  RemovableHandle post = net[0]->register_forward_hook([](nn::Module&, const Tensor&, const Tensor&) {});
  CHECK(net.forward(x).grad_fn()->name == "Tanh");
  post.remove();
  CHECK(net[0]->has_hooks() == false);
  CHECK(net.forward(x).grad_fn()->name == "Tanh");  // the Tanh's pre-hook still counts
  pre.remove();
  CHECK_FALSE(net[1]->has_hooks());
  CHECK(net.forward(x).grad_fn()->name == "LinearTanh");
}
