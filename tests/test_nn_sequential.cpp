// Sequential and the Module base through it: names, state_dict, train/eval, zero_grad, repr.
#include <catch2/catch.hpp>
#include <cmath>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_nn_sequential {

using namespace minidl;
using minidl::testing::check_close;

namespace {

// Linear(4, 3), Tanh, Linear(3, 2), Tanh, Linear(2, 2) as nn.Sequential builds it.
std::shared_ptr<nn::Sequential> small_mlp(uint64_t seed) {
  Generator gen(seed);
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 3, gen), std::make_shared<nn::Tanh>(),
                                          std::make_shared<nn::Linear>(3, 2, gen), std::make_shared<nn::Tanh>(),
                                          std::make_shared<nn::Linear>(2, 2, gen));
}

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, value] : named) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("Sequential names children 0, 1, ... like nn.Sequential", "[nn]") {
  auto model = small_mlp(0);
  CHECK(model->size() == 5);
  CHECK(names(model->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"});
  CHECK(model->parameters().size() == 6);
  CHECK(model->named_children()[3].first == "3");
  CHECK((*model)[1]->type_name() == "Tanh");
  auto first = std::dynamic_pointer_cast<nn::Linear>((*model)[0]);
  REQUIRE(first);
  CHECK(first->weight.same(model->named_parameters()[0].second));
  REQUIRE_THROWS_WITH((*model)[5], Catch::Contains("index 5 is out of range for a Sequential of 5 modules"));
  REQUIRE_THROWS_WITH(model->push_back(nullptr), Catch::Contains("null pointer at position 5"));
}

TEST_CASE("Sequential chains forward through its children", "[nn]") {
  auto model = small_mlp(1);
  Generator gen(5);
  Tensor x = Tensor::randn({6, 4}, gen);
  Tensor expected = x;
  for (size_t i = 0; i < model->size(); ++i) expected = (*model)[i]->forward(expected);
  Tensor y = model->forward(x);
  REQUIRE(y.shape() == Shape{6, 2});
  check_close(y, expected, 0.0, 0.0);
  // Hand check of a two-layer chain: tanh(W x + b) with W = [[1, -1]], b = [0.5].
  auto lin = std::make_shared<nn::Linear>(2, 1);
  lin->weight.detach().copy_(Tensor::from_vector({1, -1}, {1, 2}));
  lin->bias.detach().copy_(Tensor::from_vector({0.5f}));
  nn::Sequential chain{lin, std::make_shared<nn::Tanh>()};
  check_close(chain(Tensor::from_vector({2, 1}, {1, 2})), {std::tanh(1.5f)});
  // An empty Sequential passes its input through, as PyTorch's does.
  nn::Sequential empty;
  check_close(empty(x), x, 0.0, 0.0);
}

TEST_CASE("Sequential prints like PyTorch", "[nn]") {
  // print(nn.Sequential(nn.Linear(64, 10), nn.Tanh(),
  //                     nn.Sequential(nn.Linear(10, 3, bias=False), nn.ReLU())))
  nn::Sequential inner{std::make_shared<nn::Linear>(nn::LinearOptions(10, 3).bias(false)),
                       std::make_shared<nn::ReLU>()};
  nn::Sequential model;
  model.push_back(std::make_shared<nn::Linear>(64, 10));
  model.push_back(std::make_shared<nn::Tanh>());
  model.push_back(std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(nn::LinearOptions(10, 3).bias(false)),
                                                   std::make_shared<nn::ReLU>()));
  CHECK(model.repr() ==
        "Sequential(\n"
        "  (0): Linear(in_features=64, out_features=10, bias=True)\n"
        "  (1): Tanh()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=10, out_features=3, bias=False)\n"
        "    (1): ReLU()\n"
        "  )\n"
        ")");
  CHECK(names(model.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.0.weight"});
  CHECK(nn::Sequential().repr() == "Sequential()");
}

TEST_CASE("train() and eval() reach every child", "[nn]") {
  nn::Sequential model{std::make_shared<nn::Linear>(2, 2),
                       std::make_shared<nn::Sequential>(std::make_shared<nn::Tanh>(), std::make_shared<nn::ReLU>())};
  auto inner = std::dynamic_pointer_cast<nn::Sequential>(model[1]);
  CHECK(model.is_training());
  model.eval();
  CHECK_FALSE(model.is_training());
  CHECK_FALSE(model[0]->is_training());
  CHECK_FALSE(inner->is_training());
  CHECK_FALSE((*inner)[1]->is_training());
  model.train();
  CHECK((*inner)[0]->is_training());
  model.train(false);
  CHECK_FALSE((*inner)[0]->is_training());
}

TEST_CASE("zero_grad drops the gradients of every parameter", "[nn]") {
  auto model = small_mlp(2);
  Generator gen(1);
  sum(model->forward(Tensor::randn({3, 4}, gen))).backward();
  for (const Tensor& p : model->parameters()) REQUIRE(p.grad().defined());
  model->zero_grad();
  for (const Tensor& p : model->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("state_dict round trip and strict refusals", "[nn]") {
  auto source = small_mlp(10);
  auto target = small_mlp(11);
  nn::StateDict state = source->state_dict();
  REQUIRE(state.size() == 6);
  CHECK(state[2].name == "2.weight");
  CHECK(state[2].value.shape() == Shape{2, 3});
  CHECK(state[2].dtype == DType::F32);

  SECTION("a full state loads, copying values into the existing tensors") {
    const float* storage = target->parameters()[0].data();
    target->load_state_dict(state);
    CHECK(target->parameters()[0].data() == storage);
    for (size_t i = 0; i < state.size(); ++i) check_close(target->parameters()[i], source->parameters()[i], 0.0, 0.0);
    // Copies, not shared: changing the source afterwards leaves the target alone.
    source->parameters()[0].detach().fill_(9.0f);
    CHECK(target->parameters()[0].data()[0] != 9.0f);
  }
  SECTION("a missing key is refused and the module is left as it was") {
    const std::vector<float> before = target->parameters()[0].to_vector();
    nn::StateDict partial(state.begin(), state.end() - 1);
    REQUIRE_THROWS_WITH(target->load_state_dict(partial),
                        Catch::Contains("missing key(s) in state_dict: \"4.bias\"") && Catch::Contains("Sequential"));
    CHECK(target->parameters()[0].to_vector() == before);
    target->load_state_dict(partial, false);  // non-strict: loads what is there
    check_close(target->parameters()[0], source->parameters()[0], 0.0, 0.0);
  }
  SECTION("an unexpected key is refused") {
    nn::StateDict extra = state;
    extra.push_back({"5.weight", Tensor::zeros({2, 2}), DType::F32});
    REQUIRE_THROWS_WITH(target->load_state_dict(extra),
                        Catch::Contains("unexpected key(s) in state_dict: \"5.weight\""));
    REQUIRE_NOTHROW(target->load_state_dict(extra, false));
  }
  SECTION("a wrong shape is refused even when not strict") {
    nn::StateDict wrong = state;
    wrong[2].value = Tensor::zeros({3, 2});
    REQUIRE_THROWS_WITH(target->load_state_dict(wrong), Catch::Contains("size mismatch for 2.weight") &&
                                                            Catch::Contains("[3, 2]") && Catch::Contains("[2, 3]"));
    REQUIRE_THROWS_WITH(target->load_state_dict(wrong, false), Catch::Contains("size mismatch for 2.weight"));
  }
}

TEST_CASE("tied weights: the same Linear twice is two parameters, four state_dict names", "[nn]") {
  // PyTorch 1.13: lin = nn.Linear(2, 2); net = nn.Sequential(lin, nn.Tanh(), lin) lists 2
  // parameters ('0.weight', '0.bias'), state_dict keeps '0.weight', '0.bias', '2.weight',
  // '2.bias'; with weight [[0.1, 0.2], [0.3, 0.4]], bias [0.1, -0.2], x = [[1, -1]], one
  // SGD(lr 0.1) step on sum(net(x)) gives the numbers below (both uses' gradients summed).
  Generator gen(0);
  auto lin = std::make_shared<nn::Linear>(2, 2, gen);
  nn::Sequential net(lin, std::make_shared<nn::Tanh>(), lin);
  CHECK(net.parameters().size() == 2);
  CHECK(names(net.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias"});
  std::vector<std::string> state_names;
  for (const nn::StateEntry& entry : net.state_dict()) state_names.push_back(entry.name);
  CHECK(state_names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});

  {
    NoGradGuard no_grad;
    lin->weight.copy_(Tensor::from_vector({0.1f, 0.2f, 0.3f, 0.4f}, {2, 2}));
    lin->bias.copy_(Tensor::from_vector({0.1f, -0.2f}));
  }
  optim::SGD optimizer(net.parameters(), {.lr = 0.1});
  sum(net(Tensor::from_vector({1, -1}, {1, 2}))).backward();
  check_close(lin->weight.grad(), {0.4f, -0.6913127f, 0.5490822f, -0.8403948f}, 1e-6, 1e-5);
  optimizer.step();
  check_close(lin->weight, {0.06f, 0.2691313f, 0.2450918f, 0.4840395f}, 1e-6, 1e-5);
  check_close(lin->bias, {-0.04f, -0.3549082f}, 1e-6, 1e-5);

  // load_state_dict: every name is needed, and the later name's values land last (PyTorch
  // loads module by module, so '2.weight' overwrites '0.weight').
  nn::StateDict state = net.state_dict();
  for (size_t i = 0; i < state.size(); ++i) state[i].value = Tensor::full(state[i].value.shape(), float(i));
  net.load_state_dict(state);
  check_close(lin->weight, {2, 2, 2, 2}, 0, 0);
  check_close(lin->bias, {3, 3}, 0, 0);
  state.erase(state.begin() + 2);
  REQUIRE_THROWS_WITH(net.load_state_dict(state), Catch::Contains("missing key(s) in state_dict: \"2.weight\""));
}

TEST_CASE("a module used twice lists its buffers once, as PyTorch's named_buffers", "[nn]") {
  auto bn = std::make_shared<nn::BatchNorm1d>(2);
  nn::Sequential net(bn, bn);
  CHECK(names(net.named_buffers()) ==
        std::vector<std::string>{"0.running_mean", "0.running_var", "0.num_batches_tracked"});
  CHECK(net.parameters().size() == 2);
  CHECK(net.state_dict().size() == 10);  // both names of all five tensors
}

TEST_CASE("Sequential takes modules by value or by pointer, and gives a child back typed", "[nn][sequential]") {
  auto shared_tanh = std::make_shared<nn::Tanh>();
  nn::Sequential seq(nn::Linear(64, 10), shared_tanh, nn::Linear(nn::LinearOptions(10, 3).bias(false)));
  REQUIRE(seq.size() == 3);
  CHECK(seq[1] == shared_tanh);  // a pointer is kept, not copied
  nn::Linear& first = seq.at<nn::Linear>(0);
  CHECK(first.in_features() == 64);
  CHECK(first.weight.shape() == Shape{10, 64});
  CHECK_FALSE(seq.at<nn::Linear>(2).bias.defined());
  CHECK(seq.parameters().size() == 3);  // a moved Linear keeps its registered tensors
  CHECK(seq.parameters()[0].same(first.weight));
  CHECK(seq(Tensor::ones({2, 64})).shape() == Shape{2, 3});
  REQUIRE_THROWS_WITH(seq.at<nn::Linear>(1), "Sequential::at: child 1 is a Tanh, not the type asked for");
  REQUIRE_THROWS_WITH(seq.at<nn::Linear>(3), Catch::Contains("index 3 is out of range for a Sequential of 3"));
}

TEST_CASE("parameters() lists a module registered twice once (tied weights)", "[nn][sequential]") {
  auto shared = std::make_shared<nn::Linear>(4, 4);
  nn::Sequential seq(shared, nn::Tanh(), shared);
  CHECK(seq.named_parameters().size() == 2);  // "0.weight", "0.bias", as PyTorch (remove_duplicate=True)
  CHECK(seq.state_dict().size() == 4);        // "0.weight", "0.bias", "2.weight", "2.bias"
  const std::vector<Tensor> params = seq.parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].same(shared->weight));
  CHECK(params[1].same(shared->bias));
}

}  // namespace test_nn_sequential
