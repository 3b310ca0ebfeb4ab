// Residual, mlp, PreNormBlock and PostNormBlock: PyTorch fixtures (values, gradients and
// state_dict names of the PyTorch classes in scripts/fixtures/layers.py), the lesson's
// worked example, finite differences and the shape errors.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_nn_residual {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

// The fixture's parameters under their PyTorch names, the call's tensors left out: a strict
// load of it proves the names are PyTorch's, both ways (none missing, none unexpected).
nn::StateDict pytorch_parameters(const std::string& name) {
  nn::StateDict all = io::load_safetensors(minidl::testing::fixtures_dir() + "/" + name + ".safetensors");
  nn::StateDict params;
  for (nn::StateEntry& entry : all)
    if (entry.name != "input" && entry.name != "output" && entry.name != "grad_output" &&
        !entry.name.ends_with(".grad"))
      params.push_back(entry);
  return params;
}

void check_against_fixture(nn::Module& block, const std::string& name) {
  INFO(name);
  block.load_state_dict(pytorch_parameters(name), /*strict=*/true);
  minidl::testing::Fixture f(name);
  minidl::testing::check_call(
      f, "", [&](const Tensor& x) { return block(x); }, block.named_parameters());
}

}  // namespace

TEST_CASE("PreNormBlock and PostNormBlock match PyTorch's, with its state_dict names", "[nn][residual]") {
  for (const char* norm : {"layer", "rms"}) {
    const nn::BlockOptions options{.width = 6, .expansion = 2, .norm = norm};
    nn::PreNormBlock pre(options);
    nn::PostNormBlock post(options);
    check_against_fixture(pre, std::string("prenorm_") + norm);
    check_against_fixture(post, std::string("postnorm_") + norm);
  }
  nn::Residual residual(nn::Linear(5, 5));
  check_against_fixture(residual, "residual_linear");
}

TEST_CASE("The blocks' state_dict names and repr", "[nn][residual]") {
  nn::PreNormBlock pre({.width = 4, .expansion = 3, .norm = "rms", .dropout = 0.1});
  std::vector<std::string> names;
  for (const auto& entry : pre.state_dict()) names.push_back(entry.name);
  CHECK(names == std::vector<std::string>{"norm.weight", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"});
  CHECK(pre.repr() ==
        "PreNormBlock(\n"
        "  (norm): RMSNorm((4,), eps=None, elementwise_affine=True)\n"
        "  (mlp): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=12, bias=True)\n"
        "    (1): GELU(approximate='none')\n"
        "    (2): Linear(in_features=12, out_features=4, bias=True)\n"
        "    (3): Dropout(p=0.1, inplace=False)\n"
        "  )\n"
        ")");
  nn::Residual residual(std::make_shared<nn::Tanh>());
  CHECK(residual.repr() == "Residual(\n  (fn): Tanh()\n)");
}

TEST_CASE("Pre-norm x + f(norm(x)) on the lesson's worked example", "[nn][residual]") {
  // REFERENCE: pre-norm with f(v) = 3v on [2, 4, 4, 10] gives -1, 3, 3, 15 (LayerNorm, eps 0:
  // -1, -1/3, -1/3, 5/3). The block with f = Linear(3 I) -> identity-like: build it by hand.
  nn::LayerNorm norm(nn::LayerNormOptions{{4}, 0.0});
  struct Triple : nn::Module {
    Tensor forward(const Tensor& x) override { return x * 3.0f; }
    std::string type_name() const override { return "Triple"; }
  };
  auto f = std::make_shared<Triple>();
  Tensor x = Tensor::from_vector({2.0f, 4.0f, 4.0f, 10.0f}, {1, 4});
  check_close(x + f->forward(norm(x)), {-1.0f, 3.0f, 3.0f, 15.0f}, 1e-5, 1e-5);
  nn::Sequential normed(std::make_shared<nn::LayerNorm>(nn::LayerNormOptions{{4}, 0.0}), f);
  nn::Residual pre(std::make_shared<nn::Sequential>(std::move(normed)));
  check_close(pre(x), {-1.0f, 3.0f, 3.0f, 15.0f}, 1e-5, 1e-5);
}

TEST_CASE("The blocks pass gradients back (finite differences)", "[nn][residual]") {
  Generator gen(8);
  for (const char* norm : {"layer", "rms"}) {
    INFO(norm);
    auto pre = std::make_shared<nn::PreNormBlock>(nn::BlockOptions{.width = 4, .expansion = 2, .norm = norm}, gen);
    auto post = std::make_shared<nn::PostNormBlock>(
        nn::BlockOptions{.width = 4, .expansion = 2, .norm = norm, .activation = "silu"}, gen);
    Tensor x = Tensor::randn({3, 4}, gen);
    check_gradients([pre](const std::vector<Tensor>& in) { return (*pre)(in[0]); }, {x});
    check_gradients([post](const std::vector<Tensor>& in) { return (*post)(in[0]); }, {x});
  }
}

TEST_CASE("Residual refuses a module that changes the shape, naming both shapes", "[nn][residual]") {
  nn::Residual residual(nn::Linear(5, 3));
  CHECK_THROWS_WITH(residual(Tensor::ones({2, 5})),
                    "Residual: the wrapped Linear maps input of shape [2, 5] to shape [2, 3]; a residual "
                    "connection needs the same shape");
  CHECK_THROWS_WITH(nn::Residual(std::shared_ptr<nn::Module>()), "Residual: expected a module, got a null pointer");
  CHECK_THROWS_WITH(nn::PreNormBlock({.width = 4, .norm = "batch"}),
                    "BlockOptions: unknown norm \"batch\": choose from layer, rms, dyt");
  CHECK_THROWS_WITH(nn::PostNormBlock({.width = 4, .activation = "elu"}),
                    "BlockOptions: unknown activation \"elu\": choose from gelu, tanh, relu, silu");
  CHECK_THROWS_WITH(nn::mlp({.width = 0}), "BlockOptions: width must be at least 1, got 0");
  CHECK_THROWS_WITH(nn::mlp({.width = 4, .expansion = 0}), "BlockOptions: expansion must be at least 1, got 0");
  CHECK_THROWS_WITH(nn::mlp({.width = 4, .dropout = 2.0}), "dropout probability has to be between 0 and 1, but got 2");
}

TEST_CASE("mlp draws its Linear layers from the generator in order", "[nn][residual]") {
  Generator gen(6), same(6);
  auto m = nn::mlp({.width = 3, .expansion = 2, .activation = "tanh"}, gen);
  nn::Linear first(3, 6, same), second(6, 3, same);
  check_close(m->at<nn::Linear>(0).weight, first.weight, 0.0, 0.0);
  check_close(m->at<nn::Linear>(2).bias, second.bias, 0.0, 0.0);
  CHECK(m->at<nn::Tanh>(1).type_name() == "Tanh");
}

}  // namespace test_nn_residual
