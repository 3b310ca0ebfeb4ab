// BatchNorm1d / BatchNorm2d and the fused batch_norm op against the worked
// examples, plain-loop references, finite differences and the composite version.
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_batch_norm {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::random_normal;

namespace {

// A module with non-trivial weight, bias and running statistics.
void scramble(nn::BatchNormBase& bn, uint64_t seed) {
  NoGradGuard no_grad;  // writes into parameters
  Generator gen(seed);
  const Shape c{bn.options().num_features};
  if (bn.weight.defined()) bn.weight.copy_(Tensor::rand(c, gen, 0.5f, 1.5f));
  if (bn.bias.defined()) bn.bias.copy_(Tensor::randn(c, gen));
  if (bn.running_mean.defined()) {
    bn.running_mean.copy_(Tensor::randn(c, gen));
    bn.running_var.copy_(Tensor::rand(c, gen, 0.5f, 2.0f));
  }
}

}  // namespace

TEST_CASE("BatchNorm of one feature [0, 2, 4] with eps 0 is -1.225, 0, 1.225", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(nn::BatchNormOptions{.num_features = 1, .eps = 0.0});
  Tensor y = bn(Tensor::from_vector({0, 2, 4}, {3, 1}));
  check_close(y, {-std::sqrt(1.5f), 0.0f, std::sqrt(1.5f)}, 1e-6, 1e-6);
  check_close(y, {-1.225f, 0.0f, 1.225f}, 5e-4, 0);
}

TEST_CASE("BatchNorm of the lesson's 2x3 example", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(3);
  Tensor y = bn(Tensor::from_vector({1, 5, 3, 2, 2, 8}, {2, 3}));
  check_close(y, {-1, 1, -1, 1, -1, 1}, 5e-3, 0);
  // Two values per channel: +-1 exactly up to eps: d / sqrt(d^2 + eps).
  const float v = 0.5f / std::sqrt(0.25f + 1e-5f);
  check_close(y.reshape({6}),
              {-v, 1.5f / std::sqrt(2.25f + 1e-5f), -2.5f / std::sqrt(6.25f + 1e-5f), v,
               -1.5f / std::sqrt(2.25f + 1e-5f), 2.5f / std::sqrt(6.25f + 1e-5f)},
              1e-6, 1e-6);
}

TEST_CASE("BatchNorm in eval with a batch of one before training uses running stats 0 and 1", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(4);
  Generator gen(3);
  bn.weight.detach().copy_(Tensor::from_vector({1.0f, 2.0f, -1.0f, 0.5f}));
  bn.bias.detach().copy_(Tensor::from_vector({0.0f, 1.0f, 3.0f, -2.0f}));
  bn.eval();
  Tensor x = Tensor::randn({1, 4}, gen, 5.0f, 3.0f);
  Tensor y = bn(x);
  std::vector<float> expected;
  for (int64_t c = 0; c < 4; ++c)
    expected.push_back(x.data()[c] / std::sqrt(1.0f + 1e-5f) * bn.weight.data()[c] + bn.bias.data()[c]);
  check_close(y, expected, 1e-6, 1e-6);
}

TEST_CASE("BatchNorm parameters, buffers and state_dict match PyTorch's", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(64);
  CHECK(minidl::testing::parameter_count(bn) == 128);
  CHECK(minidl::testing::buffer_count(bn) == 129);
  nn::StateDict state = bn.state_dict();
  REQUIRE(state.size() == 5);
  const std::vector<std::string> names{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"};
  for (size_t i = 0; i < names.size(); ++i) CHECK(state[i].name == names[i]);
  CHECK(state[4].dtype == nn::DType::I64);
  CHECK(state[4].value.dim() == 0);
  check_close(bn.weight, std::vector<float>(64, 1.0f), 0, 0);
  check_close(bn.bias, std::vector<float>(64, 0.0f), 0, 0);
  check_close(bn.running_mean, std::vector<float>(64, 0.0f), 0, 0);
  check_close(bn.running_var, std::vector<float>(64, 1.0f), 0, 0);
  CHECK(bn.num_batches_tracked.item() == 0.0f);
  CHECK(bn.weight.requires_grad());
  CHECK_FALSE(bn.running_mean.requires_grad());

  nn::BatchNorm2d plain(nn::BatchNormOptions{.num_features = 8, .affine = false, .track_running_stats = false});
  CHECK(plain.state_dict().empty());
  CHECK_FALSE(plain.weight.defined());
  CHECK_FALSE(plain.running_mean.defined());
  CHECK_FALSE(plain.num_batches_tracked.defined());
}

TEST_CASE("BatchNorm repr is PyTorch's", "[norm][batch_norm]") {
  CHECK(nn::BatchNorm1d(64).repr() ==
        "BatchNorm1d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  CHECK(
      nn::BatchNorm2d(
          nn::BatchNormOptions{
              .num_features = 3, .eps = 0.001, .momentum = std::nullopt, .affine = false, .track_running_stats = false})
          .repr() == "BatchNorm2d(3, eps=0.001, momentum=None, affine=False, track_running_stats=False)");
}

TEST_CASE("BatchNorm training normalizes with batch statistics and biased variance", "[norm][batch_norm]") {
  for (Shape shape : {Shape{16, 5}, Shape{6, 5, 7}}) {
    nn::BatchNorm1d bn(5);
    scramble(bn, 11);
    Tensor x = random_normal(shape, 12, 2.0f, 3.0f);
    auto m = minidl::testing::channel_moments_reference(x);
    check_close(bn(x), minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, bn.weight, bn.bias),
                2e-5, 1e-5);
  }
  nn::BatchNorm2d bn2(3);
  scramble(bn2, 13);
  Tensor x = random_normal({4, 3, 5, 6}, 14, -1.0f, 2.0f);
  auto m = minidl::testing::channel_moments_reference(x);
  check_close(bn2(x), minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, bn2.weight, bn2.bias),
              2e-5, 1e-5);
}

TEST_CASE("BatchNorm running statistics over several steps, eval uses them and never moves them",
          "[norm][batch_norm]") {
  for (std::optional<double> momentum :
       {std::optional<double>(0.1), std::optional<double>(0.5), std::optional<double>()}) {
    for (Shape shape : {Shape{8, 4}, Shape{5, 4, 3}}) {
      INFO("momentum " << nn::python_float(momentum) << " shape " << to_string(shape));
      nn::BatchNorm1d bn(nn::BatchNormOptions{.num_features = 4, .momentum = momentum});
      std::vector<double> rm(4, 0.0), rv(4, 1.0);  // the reference, updated by hand
      for (int step = 1; step <= 4; ++step) {
        Tensor x = random_normal(shape, uint64_t(100 + step), float(step), 1.0f + float(step));
        bn(x);
        auto m = minidl::testing::channel_moments_reference(x);
        const double f = momentum ? *momentum : 1.0 / step;
        for (size_t c = 0; c < 4; ++c) {
          rm[c] = (1 - f) * rm[c] + f * m.mean[c];
          rv[c] = (1 - f) * rv[c] + f * m.unbiased_var[c];
        }
        CHECK(bn.num_batches_tracked.item() == float(step));
      }
      check_close(bn.running_mean, std::vector<float>(rm.begin(), rm.end()), 1e-5, 1e-5);
      check_close(bn.running_var, std::vector<float>(rv.begin(), rv.end()), 1e-5, 1e-5);

      bn.eval();
      Tensor before_mean = bn.running_mean.clone(), before_var = bn.running_var.clone();
      Tensor x = random_normal(shape, 7, 3.0f, 2.0f);
      Tensor y = bn(x);
      bn(random_normal(shape, 8));
      check_close(y, minidl::testing::channel_normalize_reference(x, rm, rv, 1e-5, bn.weight, bn.bias), 1e-5, 1e-5);
      check_close(bn.running_mean, before_mean, 0, 0);
      check_close(bn.running_var, before_var, 0, 0);
      CHECK(bn.num_batches_tracked.item() == 4.0f);

      bn.train();  // back in training: batch statistics again, and the statistics move
      Tensor z = random_normal(shape, 9, -2.0f, 0.5f);
      auto m = minidl::testing::channel_moments_reference(z);
      check_close(bn(z),
                  minidl::testing::channel_normalize_reference(z, m.mean, m.biased_var, 1e-5, bn.weight, bn.bias), 2e-5,
                  1e-5);
      CHECK(bn.num_batches_tracked.item() == 5.0f);
    }
  }
}

TEST_CASE("BatchNorm without tracked statistics uses batch statistics in eval too", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(nn::BatchNormOptions{.num_features = 3, .track_running_stats = false});
  CHECK(bn.named_buffers().empty());
  Tensor x = random_normal({10, 3}, 21, 4.0f, 2.0f);
  Tensor train_out = bn(x);
  bn.eval();
  check_close(bn(x), train_out, 0, 0);
  auto m = minidl::testing::channel_moments_reference(x);
  check_close(train_out,
              minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, Tensor(), Tensor()), 2e-5,
              1e-5);
}

TEST_CASE("BatchNorm without affine has no parameters and only normalizes", "[norm][batch_norm]") {
  nn::BatchNorm2d bn(nn::BatchNormOptions{.num_features = 2, .affine = false});
  CHECK(bn.parameters().empty());
  CHECK(minidl::testing::buffer_count(bn) == 5);
  Tensor x = random_normal({3, 2, 2, 2}, 31, 1.0f, 5.0f);
  auto m = minidl::testing::channel_moments_reference(x);
  check_close(bn(x), minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, Tensor(), Tensor()),
              2e-5, 1e-5);
}

TEST_CASE("BatchNorm input, weight and bias gradients match finite differences", "[norm][batch_norm]") {
  for (bool training : {true, false}) {
    for (Shape shape : {Shape{6, 3}, Shape{4, 3, 5}, Shape{3, 3, 2, 4}}) {
      INFO("training " << training << " shape " << to_string(shape));
      Tensor running_mean = random_normal({3}, 41), running_var = Tensor::from_vector({0.5f, 1.5f, 2.5f});
      auto f = [&](const std::vector<Tensor>& in) {
        return batch_norm(in[0], running_mean, running_var, in[1], in[2], training, 0.1, 1e-5);
      };
      check_gradients(f, {random_normal(shape, 42), random_normal({3}, 43, 1.0f, 0.3f), random_normal({3}, 44)});
    }
  }
}

TEST_CASE("BatchNorm fused op and composite agree in forward, backward and running stats", "[norm][batch_norm]") {
  for (bool training : {true, false}) {
    for (Shape shape : {Shape{8, 5}, Shape{4, 5, 6}, Shape{2, 5, 3, 4}}) {
      INFO("training " << training << " shape " << to_string(shape));
      Tensor rm_fused = random_normal({5}, 51), rv_fused = Tensor::rand({5}, default_generator(), 0.5f, 2.0f);
      Tensor rm_comp = rm_fused.clone(), rv_comp = rv_fused.clone();
      auto fused = [&](const std::vector<Tensor>& in) {
        return batch_norm(in[0], rm_fused, rv_fused, in[1], in[2], training, 0.3, 1e-5);
      };
      auto comp = [&](const std::vector<Tensor>& in) {
        return composite::batch_norm(in[0], rm_comp, rv_comp, in[1], in[2], training, 0.3, 1e-5);
      };
      std::vector<Tensor> inputs{random_normal(shape, 52, 1.0f, 2.0f), random_normal({5}, 53), random_normal({5}, 54)};
      auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(comp, inputs);
      for (size_t i = 0; i < a.size(); ++i) {
        INFO("result " << i << " (0 = output, then dx, dweight, dbias)");
        check_close(a[i], b[i], 1e-5, 1e-5);
      }
      check_close(rm_fused, rm_comp, 1e-6, 1e-6);
      check_close(rv_fused, rv_comp, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("BatchNorm normalizes inputs with mean 1e4 and std 1e-1", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(4);
  Tensor x = random_normal({256, 4}, 61, 1e4f, 0.1f);
  Tensor y = bn(x);
  auto m = minidl::testing::channel_moments_reference(x);
  check_close(y, minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, Tensor(), Tensor()), 1e-5,
              1e-5);
  Tensor mean_y = mean(y, {0}), var_y = var(y, {0}, 0);
  check_close(mean_y, std::vector<float>(4, 0.0f), 1e-5, 0);
  check_close(var_y, std::vector<float>(4, 1.0f), 1e-2, 0);  // eps 1e-5 against var 1e-2
  // The backward too: the saved float mean is off by up to 5e-4 here, which it corrects.
  Tensor x_grad = x.clone().requires_grad_(), dy = random_normal({256, 4}, 62);
  sum(batch_norm(x_grad, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5) * dy).backward();
  check_close(x_grad.grad(),
              minidl::testing::normalize_input_grad_reference(x, dy, 4, 256, 1e-5,
                                                              [](int64_t c, int64_t n) { return n * 4 + c; }),
              1e-4, 1e-5);  // |dx| up to ~40
}

TEST_CASE("composite BatchNorm centres exactly: mean 1e4, std 1e-2", "[norm][batch_norm]") {
  // Half an ulp of 1e4 (4.9e-4) is 5% of the spread: x - float(mean) would show it.
  Tensor x = random_normal({64, 4}, 63, 1e4f, 1e-2f);
  Tensor running_mean = Tensor::zeros({4}), running_var = Tensor::ones({4});
  Tensor y = composite::batch_norm(x, running_mean, running_var, Tensor(), Tensor(), true, 1.0, 1e-5);
  auto m = minidl::testing::channel_moments_reference(x);
  check_close(y, minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, Tensor(), Tensor()), 1e-5,
              1e-5);
  std::vector<float> unbiased(m.unbiased_var.begin(), m.unbiased_var.end());
  check_close(running_var, unbiased, 0, 1e-6);
}

TEST_CASE("BatchNorm on an empty batch returns an empty tensor and counts the batch, as PyTorch",
          "[norm][batch_norm]") {
  // PyTorch 1.13: an empty result, running statistics untouched, num_batches_tracked 1,
  // zero gradients for weight and bias.
  for (Shape shape : {Shape{0, 3}, Shape{0, 3, 4}, Shape{2, 3, 0}}) {
    INFO("shape " << to_string(shape));
    nn::BatchNorm1d bn(3);
    Tensor x = Tensor::zeros(shape).requires_grad_();
    Tensor y = bn(x);
    CHECK(y.shape() == shape);
    check_close(bn.running_mean, {0, 0, 0}, 0, 0);
    check_close(bn.running_var, {1, 1, 1}, 0, 0);
    CHECK(bn.num_batches_tracked.item() == 1.0f);
    sum(y).backward();
    CHECK(x.grad().shape() == shape);
    check_close(bn.weight.grad(), {0, 0, 0}, 0, 0);
    check_close(bn.bias.grad(), {0, 0, 0}, 0, 0);
    bn.eval();
    CHECK(bn(Tensor::zeros(shape)).shape() == shape);
  }
  nn::BatchNorm1d untracked(nn::BatchNormOptions{.num_features = 3, .track_running_stats = false});
  CHECK(untracked(Tensor::zeros({0, 3})).shape() == Shape{0, 3});
}

TEST_CASE("BatchNorm loads a state without num_batches_tracked as 0, strict too, as PyTorch", "[norm][batch_norm]") {
  auto bn_ptr = std::make_shared<nn::BatchNorm1d>(3);
  nn::Sequential net(std::make_shared<nn::Linear>(3, 3), bn_ptr);
  Generator gen(3);
  net(Tensor::randn({4, 3}, gen));
  net(Tensor::randn({4, 3}, gen));
  nn::BatchNorm1d& bn = *bn_ptr;
  REQUIRE(bn.num_batches_tracked.item() == 2.0f);
  nn::StateDict state;
  for (const nn::StateEntry& entry : net.state_dict())
    if (entry.name != "1.num_batches_tracked") state.push_back({entry.name, entry.value.clone(), entry.dtype});
  net.load_state_dict(state, /*strict=*/true);
  CHECK(bn.num_batches_tracked.item() == 0.0f);
  // Only that key: a missing running_var is still an error.
  nn::StateDict no_var;
  for (const nn::StateEntry& entry : state)
    if (entry.name != "1.running_var") no_var.push_back(entry);
  REQUIRE_THROWS_WITH(net.load_state_dict(no_var), Catch::Contains("missing key(s) in state_dict: \"1.running_var\""));
}

TEST_CASE("composite batch_norm refuses what the fused op refuses, with the same message", "[norm][batch_norm]") {
  // The fused op's messages, asserted in "BatchNorm errors name what was expected" below.
  const Tensor one = Tensor::zeros({1, 3}), x = Tensor::zeros({4, 3}), zero = Tensor::zeros({3}),
               three = Tensor::ones({3});
  REQUIRE_THROWS_WITH(composite::batch_norm(one, zero, three, Tensor(), Tensor(), true, 0.1, 1e-5),
                      "Expected more than 1 value per channel when training, got input size [1, 3]");
  REQUIRE_THROWS_WITH(
      composite::batch_norm(Tensor::zeros({1, 3, 1}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
      "Expected more than 1 value per channel when training, got input size [1, 3, 1]");
  REQUIRE_THROWS_WITH(composite::batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false, 0.1, 1e-5),
                      "batch_norm: running_mean and running_var are required when not training");
  REQUIRE_THROWS_WITH(composite::batch_norm(x, Tensor::zeros({4}), three, Tensor(), Tensor(), true, 0.1, 1e-5),
                      "batch_norm: expected running_mean of shape [3] for an input of shape [4, 3], got [4]");
  REQUIRE_THROWS_WITH(
      composite::batch_norm(Tensor::zeros({3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
      "batch_norm: expected an input of shape (N, C, *) with at least 2 dims, got [3]");
  check_close(composite::batch_norm(one, zero, three, Tensor(), Tensor(), false, 0.1, 1e-5), {0, 0, 0}, 0, 0);
}

TEST_CASE("BatchNorm errors name what was expected", "[norm][batch_norm]") {
  nn::BatchNorm1d bn(64);
  REQUIRE_THROWS_WITH(bn(Tensor::zeros({8, 32})),
                      Catch::Contains("expected input with 64 channels") && Catch::Contains("[8, 32]"));
  REQUIRE_THROWS_WITH(bn(Tensor::zeros({2, 64, 3, 3})),
                      Catch::Contains("expected 2D or 3D input (got 4D input") && Catch::Contains("[2, 64, 3, 3]"));
  REQUIRE_THROWS_WITH(nn::BatchNorm2d(64)(Tensor::zeros({2, 64, 3})),
                      Catch::Contains("expected 4D input (got 3D input"));
  REQUIRE_THROWS_WITH(
      bn(Tensor::zeros({1, 64})),
      Catch::Contains("Expected more than 1 value per channel when training") && Catch::Contains("[1, 64]"));
  REQUIRE_THROWS_WITH(bn(Tensor::zeros({1, 64, 1})),
                      Catch::Contains("Expected more than 1 value per channel when training"));
  CHECK(bn.num_batches_tracked.item() == 0.0f);  // a refused batch is not counted
  bn.eval();
  CHECK_NOTHROW(bn(Tensor::zeros({1, 64})));  // eval with running statistics: fine
  nn::BatchNorm1d untracked(nn::BatchNormOptions{.num_features = 2, .track_running_stats = false});
  untracked.eval();
  REQUIRE_THROWS_WITH(untracked(Tensor::zeros({1, 2})),
                      Catch::Contains("Expected more than 1 value per channel when training"));
  REQUIRE_THROWS_WITH(
      batch_norm(Tensor::zeros({4, 3}), Tensor(), Tensor(), Tensor::ones({2}), Tensor(), true, 0.1, 1e-5),
      Catch::Contains("expected weight of shape [3]") && Catch::Contains("got [2]"));
  const Tensor x = Tensor::zeros({4, 3}), three = Tensor::ones({3});
  REQUIRE_THROWS_WITH(batch_norm(x, Tensor::zeros({4}), three, Tensor(), Tensor(), true, 0.1, 1e-5),
                      "batch_norm: expected running_mean of shape [3] for an input of shape [4, 3], got [4]");
  REQUIRE_THROWS_WITH(batch_norm(x, three, Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      "batch_norm: running_mean and running_var must be given together");
  REQUIRE_THROWS_WITH(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false, 0.1, 1e-5),
                      "batch_norm: running_mean and running_var are required when not training");
  REQUIRE_THROWS_WITH(nn::BatchNorm1d(0), Catch::Contains("num_features must be positive"));
}

}  // namespace test_norm_batch_norm
