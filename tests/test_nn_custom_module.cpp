// A user-written module: subclass Module, register parameters and children, write
// forward from ops; it then trains end to end with cross_entropy and SGD.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_nn_custom_module {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

// y = x * scale + shift over the last dim.
class Affine : public nn::Module {
 public:
  explicit Affine(int64_t features) {
    scale = register_parameter("scale", Tensor::ones({features}));
    shift = register_parameter("shift", Tensor::zeros({features}));
  }
  Tensor forward(const Tensor& x) override { return x * scale + shift; }
  std::string type_name() const override { return "Affine"; }
  std::string extra_repr() const override { return cat("features=", scale.size(0)); }

  Tensor scale;  // (features)
  Tensor shift;  // (features)
};

// Linear -> Affine -> tanh -> Linear, children registered by name.
class Classifier : public nn::Module {
 public:
  explicit Classifier(Generator& gen) {
    hidden = register_module("hidden", std::make_shared<nn::Linear>(2, 16, gen));
    affine = register_module("affine", std::make_shared<Affine>(16));
    out = register_module("out", std::make_shared<nn::Linear>(16, 2, gen));
  }
  Tensor forward(const Tensor& x) override { return out->forward(tanh(affine->forward(hidden->forward(x)))); }
  std::string type_name() const override { return "Classifier"; }

  std::shared_ptr<nn::Linear> hidden;
  std::shared_ptr<Affine> affine;
  std::shared_ptr<nn::Linear> out;
};

// Points in [-1, 1]^2 labelled 1 when x0 * x1 > 0 (XOR of the signs: not linearly separable).
std::pair<Tensor, Tensor> quadrant_data(int64_t n, Generator& gen) {
  Tensor x = Tensor::rand({n, 2}, gen, -1.0f, 1.0f);
  Tensor y = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) y.data()[i] = x.at({i, 0}) * x.at({i, 1}) > 0 ? 1.0f : 0.0f;
  return {x, y};
}

float accuracy(const Tensor& logits, const Tensor& targets) {
  Tensor predicted = argmax(logits, 1);
  int64_t right = 0;
  for (int64_t i = 0; i < targets.numel(); ++i) right += predicted.data()[i] == targets.data()[i];
  return float(right) / float(targets.numel());
}

}  // namespace

TEST_CASE("A user-defined module registers parameters and computes from ops", "[nn]") {
  Affine affine(3);
  affine.scale.detach().copy_(Tensor::from_vector({2, -1, 0.5f}));
  affine.shift.detach().copy_(Tensor::from_vector({1, 0, -1}));
  check_close(affine(Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3})), {3, -2, 0.5f, 9, -5, 2});
  CHECK(affine.repr() == "Affine(features=3)");
  CHECK(affine.scale.requires_grad());
  check_gradients(
      [&](const std::vector<Tensor>& in) { return in[0] * in[1] + in[2]; },
      {Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}), affine.scale.detach().clone(), affine.shift.detach().clone()});
}

TEST_CASE("A user-defined module nests, names, prints and trains end to end", "[nn][optim][loss]") {
  Generator gen(0);
  Classifier model(gen);
  std::vector<std::string> names;
  for (const auto& [name, value] : model.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"hidden.weight", "hidden.bias", "affine.scale", "affine.shift", "out.weight",
                                          "out.bias"});
  CHECK(model.repr() ==
        "Classifier(\n"
        "  (hidden): Linear(in_features=2, out_features=16, bias=True)\n"
        "  (affine): Affine(features=16)\n"
        "  (out): Linear(in_features=16, out_features=2, bias=True)\n"
        ")");

  auto [x, y] = quadrant_data(256, gen);
  optim::SGD optimizer(model.parameters(), {.lr = 0.5, .momentum = 0.9});
  const float first_loss = cross_entropy(model(x), y).item();
  for (int step = 0; step < 300; ++step) {
    optimizer.zero_grad();
    Tensor loss = cross_entropy(model(x), y);
    loss.backward();
    optimizer.step();
  }
  REQUIRE(model.affine->scale.grad().defined());  // the gradient reached the user's parameter
  model.eval();
  const float last_loss = cross_entropy(model(x), y).item();
  INFO("loss " << first_loss << " -> " << last_loss);
  CHECK(first_loss > 0.6f);  // about ln 2 at the start
  CHECK(last_loss < 0.15f);
  auto [x_test, y_test] = quadrant_data(256, gen);
  CHECK(accuracy(model(x_test), y_test) > 0.9f);
}

}  // namespace test_nn_custom_module
