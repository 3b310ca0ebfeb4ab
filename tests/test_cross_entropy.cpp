// cross_entropy against PyTorch 1.13 for every option and combination, gradients by
// finite differences, stability, and its errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_cross_entropy {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

Tensor sample_logits() {
  return Tensor::from_vector({1.0f, -2.0f, 0.5f, 3.0f, 0.0f, 0.3f, -1.2f, 2.2f, -0.7f, 1.5f, 0.9f, -0.4f}, {3, 4});
}
Tensor sample_targets() { return Tensor::from_vector({3, 1, 0}); }
Tensor sample_weight() { return Tensor::from_vector({0.2f, 1.0f, 2.5f, 0.7f}); }

struct Case {
  bool weighted;
  int64_t ignore_index;
  Reduction reduction;
  double label_smoothing;
  std::vector<float> loss;
  std::vector<float> grad;  // d sum(loss) / d logits, (3, 4)
};

// Produced by PyTorch 1.13:
//   x = torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.0, 0.3, -1.2, 2.2], [-0.7, 1.5, 0.9, -0.4]], requires_grad=True)
//   t = torch.tensor([3, 1, 0]); w = torch.tensor([0.2, 1.0, 2.5, 0.7])
//   for wt, ii, red, s in itertools.product([None, w], [-100, 1], ['none', 'sum', 'mean'], [0.0, 0.2]):
//       x.grad = None
//       l = F.cross_entropy(x, t, weight=wt, ignore_index=ii, reduction=red, label_smoothing=s)
//       l.sum().backward(); print(l, x.grad)
// (ignore_index=1 ignores the second example.)
const std::vector<Case> kCases = {
    {false,
     -100,
     Reduction::None,
     0.0,
     {0.2022535f, 2.157541f, 2.792876f},
     {0.1105537f, 0.005504148f, 0.06705423f, -0.1831121f, 0.08564527f, -0.884391f, 0.02579586f, 0.7729498f, -0.9387552f,
      0.5527356f, 0.3033477f, 0.0826719f}},
    {false,
     -100,
     Reduction::None,
     0.2,
     {0.6772535f, 2.152541f, 2.587875f},
     {0.06055373f, -0.04449585f, 0.01705423f, -0.03311217f, 0.03564527f, -0.734391f, -0.02420414f, 0.7229498f,
      -0.7887552f, 0.5027356f, 0.2533477f, 0.03267189f}},
    {false,
     -100,
     Reduction::Sum,
     0.0,
     {5.15267f},
     {0.1105537f, 0.005504148f, 0.06705423f, -0.1831121f, 0.08564527f, -0.884391f, 0.02579586f, 0.7729498f, -0.9387552f,
      0.5527356f, 0.3033477f, 0.0826719f}},
    {false,
     -100,
     Reduction::Sum,
     0.2,
     {5.41767f},
     {0.06055373f, -0.04449585f, 0.01705423f, -0.03311217f, 0.03564527f, -0.734391f, -0.02420414f, 0.7229498f,
      -0.7887552f, 0.5027356f, 0.2533477f, 0.03267189f}},
    {false,
     -100,
     Reduction::Mean,
     0.0,
     {1.717557f},
     {0.03685125f, 0.001834716f, 0.02235141f, -0.06103738f, 0.02854843f, -0.294797f, 0.00859862f, 0.25765f, -0.3129184f,
      0.1842452f, 0.1011159f, 0.0275573f}},
    {false,
     -100,
     Reduction::Mean,
     0.2,
     {1.80589f},
     {0.02018458f, -0.01483195f, 0.005684744f, -0.01103738f, 0.01188176f, -0.244797f, -0.008068046f, 0.2409833f,
      -0.2629184f, 0.1675786f, 0.08444925f, 0.01089064f}},
    {false,
     1,
     Reduction::None,
     0.0,
     {0.2022535f, 0.0f, 2.792876f},
     {0.1105537f, 0.005504148f, 0.06705423f, -0.1831121f, 0.0f, 0.0f, 0.0f, 0.0f, -0.9387552f, 0.5527356f, 0.3033477f,
      0.0826719f}},
    {false,
     1,
     Reduction::None,
     0.2,
     {0.6772535f, 0.0f, 2.587875f},
     {0.06055373f, -0.04449585f, 0.01705423f, -0.03311217f, 0.0f, 0.0f, 0.0f, 0.0f, -0.7887552f, 0.5027356f, 0.2533477f,
      0.03267189f}},
    {false,
     1,
     Reduction::Sum,
     0.0,
     {2.995129f},
     {0.1105537f, 0.005504148f, 0.06705423f, -0.1831121f, 0.0f, 0.0f, 0.0f, 0.0f, -0.9387552f, 0.5527356f, 0.3033477f,
      0.0826719f}},
    {false,
     1,
     Reduction::Sum,
     0.2,
     {3.265129f},
     {0.06055373f, -0.04449585f, 0.01705423f, -0.03311217f, 0.0f, 0.0f, 0.0f, 0.0f, -0.7887552f, 0.5027356f, 0.2533477f,
      0.03267189f}},
    {false,
     1,
     Reduction::Mean,
     0.0,
     {1.497565f},
     {0.05527687f, 0.002752074f, 0.03352711f, -0.09155607f, 0.0f, 0.0f, 0.0f, 0.0f, -0.4693776f, 0.2763678f, 0.1516739f,
      0.04133595f}},
    {false,
     1,
     Reduction::Mean,
     0.2,
     {1.632565f},
     {0.03027687f, -0.02224793f, 0.008527113f, -0.01655608f, 0.0f, 0.0f, 0.0f, 0.0f, -0.3943776f, 0.2513678f,
      0.1266738f, 0.01633595f}},
    {true,
     -100,
     Reduction::None,
     0.0,
     {0.1415774f, 2.157541f, 0.5585751f},
     {0.07738762f, 0.003852903f, 0.04693796f, -0.1281785f, 0.08564527f, -0.884391f, 0.02579586f, 0.7729498f, -0.187751f,
      0.1105471f, 0.06066954f, 0.01653438f}},
    {true,
     -100,
     Reduction::None,
     0.2,
     {0.7402577f, 2.324692f, 0.7407928f},
     {0.07623191f, -0.04570676f, -0.0726977f, 0.04217253f, 0.07735818f, -0.7320789f, -0.09868822f, 0.7534088f,
      -0.146727f, 0.1600395f, -0.009727864f, -0.003584678f}},
    {true,
     -100,
     Reduction::Sum,
     0.0,
     {2.857694f},
     {0.07738762f, 0.003852903f, 0.04693796f, -0.1281785f, 0.08564527f, -0.884391f, 0.02579586f, 0.7729498f, -0.187751f,
      0.1105471f, 0.06066954f, 0.01653438f}},
    {true,
     -100,
     Reduction::Sum,
     0.2,
     {3.805743f},
     {0.07623191f, -0.04570676f, -0.0726977f, 0.04217253f, 0.07735818f, -0.7320789f, -0.09868822f, 0.7534088f,
      -0.146727f, 0.1600395f, -0.009727864f, -0.003584678f}},
    {true,
     -100,
     Reduction::Mean,
     0.0,
     {1.504049f},
     {0.04073032f, 0.002027844f, 0.02470419f, -0.06746236f, 0.04507646f, -0.4654689f, 0.01357677f, 0.4068156f,
      -0.09881633f, 0.05818269f, 0.03193134f, 0.008702304f}},
    {true,
     -100,
     Reduction::Mean,
     0.2,
     {2.003022f},
     {0.04012206f, -0.02405619f, -0.03826195f, 0.02219607f, 0.04071483f, -0.3853046f, -0.05194117f, 0.3965309f,
      -0.07722471f, 0.08423132f, -0.005119931f, -0.001886674f}},
    {true,
     1,
     Reduction::None,
     0.0,
     {0.1415774f, 0.0f, 0.5585751f},
     {0.07738762f, 0.003852903f, 0.04693796f, -0.1281785f, 0.0f, 0.0f, 0.0f, 0.0f, -0.187751f, 0.1105471f, 0.06066954f,
      0.01653438f}},
    {true,
     1,
     Reduction::None,
     0.2,
     {0.7402577f, 0.0f, 0.7407928f},
     {0.07623191f, -0.04570676f, -0.0726977f, 0.04217253f, 0.0f, 0.0f, 0.0f, 0.0f, -0.146727f, 0.1600395f,
      -0.009727864f, -0.003584678f}},
    {true,
     1,
     Reduction::Sum,
     0.0,
     {0.7001525f},
     {0.07738762f, 0.003852903f, 0.04693796f, -0.1281785f, 0.0f, 0.0f, 0.0f, 0.0f, -0.187751f, 0.1105471f, 0.06066954f,
      0.01653438f}},
    {true,
     1,
     Reduction::Sum,
     0.2,
     {1.48105f},
     {0.07623191f, -0.04570676f, -0.0726977f, 0.04217253f, 0.0f, 0.0f, 0.0f, 0.0f, -0.146727f, 0.1600395f,
      -0.009727864f, -0.003584678f}},
    {true,
     1,
     Reduction::Mean,
     0.0,
     {0.7779472f},
     {0.08598624f, 0.004281004f, 0.05215329f, -0.1424206f, 0.0f, 0.0f, 0.0f, 0.0f, -0.2086123f, 0.1228301f, 0.0674106f,
      0.01837153f}},
    {true,
     1,
     Reduction::Mean,
     0.2,
     {1.645612f},
     {0.08470213f, -0.0507853f, -0.08077523f, 0.04685837f, 0.0f, 0.0f, 0.0f, 0.0f, -0.16303f, 0.1778217f, -0.01080874f,
      -0.003982976f}},
};

CrossEntropyOptions options_for(const Case& c) {
  CrossEntropyOptions o;
  if (c.weighted) o.weight = sample_weight();
  o.ignore_index = c.ignore_index;
  o.reduction = c.reduction;
  o.label_smoothing = c.label_smoothing;
  return o;
}

std::string describe(const Case& c) {
  return cat("weight=", c.weighted ? "w" : "None", " ignore_index=", c.ignore_index,
             " reduction=", reduction_name(c.reduction), " label_smoothing=", c.label_smoothing);
}

}  // namespace

TEST_CASE("cross_entropy matches PyTorch for every option combination", "[loss]") {
  for (const Case& c : kCases) {
    INFO(describe(c));
    Tensor logits = sample_logits().requires_grad_();
    Tensor loss = cross_entropy(logits, sample_targets(), options_for(c));
    CHECK(loss.shape() == (c.reduction == Reduction::None ? Shape{3} : Shape{}));
    check_close(loss, c.loss, 1e-6, 1e-6);
    sum(loss).backward();
    check_close(logits.grad(), c.grad, 1e-6, 1e-5);
  }
}

TEST_CASE("cross_entropy gradients match finite differences for every option", "[loss]") {
  for (const Case& c : kCases) {
    INFO(describe(c));
    const CrossEntropyOptions options = options_for(c);
    check_gradients([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], sample_targets(), options); },
                    {sample_logits()});
  }
}

TEST_CASE("cross_entropy by hand: uniform logits give ln C", "[loss]") {
  Tensor logits = Tensor::zeros({4, 10});
  Tensor targets = Tensor::from_vector({0, 3, 9, 5});
  CHECK(cross_entropy(logits, targets).item() == Approx(std::log(10.0)).epsilon(1e-6));
  CHECK(cross_entropy(logits, targets, {.reduction = Reduction::Sum}).item() ==
        Approx(4 * std::log(10.0)).epsilon(1e-6));
  // Smoothing cannot change a uniform prediction's loss: every class costs ln C.
  CHECK(cross_entropy(logits, targets, {.label_smoothing = 0.3}).item() == Approx(std::log(10.0)).epsilon(1e-6));
}

TEST_CASE("cross_entropy's result has PyTorch's grad_fn, NllLossBackward0", "[loss]") {
  Tensor logits = Tensor::zeros({3, 4}).requires_grad_();
  const Tensor loss = cross_entropy(logits, Tensor::from_vector({0, 1, 3}));
  REQUIRE(loss.grad_fn());
  CHECK(loss.grad_fn()->name == "NllLoss");
  CHECK_THAT(loss.to_string(), Catch::Matchers::Contains("grad_fn=<NllLossBackward0>"));
}

TEST_CASE("cross_entropy is stable for large logits", "[loss]") {
  // F.cross_entropy(torch.tensor([[1000., 0., -1000.]], requires_grad=True), torch.tensor([1]))
  //   -> 1000., grad [[1., -1., 0.]]
  Tensor logits = Tensor::from_vector({1000.0f, 0.0f, -1000.0f}, {1, 3}).requires_grad_();
  Tensor loss = cross_entropy(logits, Tensor::from_vector({1}));
  CHECK(loss.item() == Approx(1000.0f));
  loss.backward();
  check_close(logits.grad(), {1.0f, -1.0f, 0.0f});
  // Two equal huge logits: ln 2, not inf or NaN.
  CHECK(cross_entropy(Tensor::from_vector({1e30f, 1e30f}, {1, 2}), Tensor::from_vector({0})).item() ==
        Approx(std::log(2.0)));
}

TEST_CASE("cross_entropy takes one unbatched example", "[loss]") {
  // x = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
  // F.cross_entropy(x, torch.tensor(2), label_smoothing=0.1) -> 1.897702,
  //   grad [0.1978905, 0.5951983, -0.793089]
  Tensor logits = Tensor::from_vector({1.0f, 2.0f, 0.5f}).requires_grad_();
  Tensor loss = cross_entropy(logits, Tensor::scalar(2.0f), {.label_smoothing = 0.1});
  REQUIRE(loss.shape() == Shape{});
  CHECK(loss.item() == Approx(1.897702f).epsilon(1e-6));
  loss.backward();
  check_close(logits.grad(), {0.1978905f, 0.5951983f, -0.793089f}, 1e-6, 1e-5);
  CHECK(cross_entropy(logits, Tensor::scalar(2.0f), {.reduction = Reduction::None}).shape() == Shape{});
}

TEST_CASE("cross_entropy with every target ignored: mean is NaN, gradient zero, as PyTorch", "[loss]") {
  // F.cross_entropy(x, torch.full((N,), -100), label_smoothing=0.2) -> nan; x.grad all zeros
  Tensor logits = sample_logits().requires_grad_();
  Tensor targets = Tensor::full({3}, -100.0f);
  Tensor loss = cross_entropy(logits, targets, {.label_smoothing = 0.2});
  CHECK(std::isnan(loss.item()));
  loss.backward();
  check_close(logits.grad(), Tensor::zeros({3, 4}), 0.0, 0.0);
  CHECK(cross_entropy(logits, targets, {.reduction = Reduction::Sum}).item() == 0.0f);
}

TEST_CASE("cross_entropy with total weight 0: mean is NaN with NaN gradients, as PyTorch", "[loss]") {
  // PyTorch's nll term is 0 / 0 here; the smoothing term alone would be positive / 0 = inf.
  const CrossEntropyOptions mean{.weight = Tensor::from_vector({1, 0, 1}), .label_smoothing = 0.5};
  Tensor x = Tensor::from_vector({0, 1, 2}, {1, 3}).requires_grad_();
  Tensor loss = cross_entropy(x, Tensor::from_vector({1}), mean);
  CHECK(std::isnan(loss.item()));
  loss.backward();
  for (float g : x.grad().to_vector()) CHECK(std::isnan(g));
  // Sum does not divide: PyTorch 1.13 gives 0.4692 and these gradients.
  CrossEntropyOptions sum = mean;
  sum.reduction = Reduction::Sum;
  Tensor y = Tensor::from_vector({0, 1, 2}, {1, 3}).requires_grad_();
  Tensor total = cross_entropy(y, Tensor::from_vector({1}), sum);
  CHECK(total.item() == Approx(0.4692019820213318).epsilon(1e-6));
  total.backward();
  check_close(y.grad(), {-0.1366564780473709f, 0.08157616853713989f, 0.05508033558726311f}, 1e-6, 1e-5);
}

TEST_CASE("CrossEntropyLoss holds its options", "[loss]") {
  nn::CrossEntropyLoss criterion({.weight = sample_weight(), .reduction = Reduction::Sum});
  check_close(criterion(sample_logits(), sample_targets()), {2.857694f}, 1e-6, 1e-6);  // the table's weighted sum
  CHECK(criterion.options().reduction == Reduction::Sum);
  CHECK(nn::CrossEntropyLoss().repr() == "CrossEntropyLoss()");
}

TEST_CASE("cross_entropy errors name the target, its position and the class count", "[loss]") {
  Tensor logits = sample_logits();
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({3, 4, 0})),
                      Catch::Contains("target 4 at position 1 is out of range for 4 classes") &&
                          Catch::Contains("expected 0..3 or ignore_index -100"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({3, 1, -1})),
                      Catch::Contains("target -1 at position 2 is out of range for 4 classes"));
  // -100 is only ignored while it is the ignore_index.
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({-100, 1, 0}), {.ignore_index = 1}),
                      Catch::Contains("target -100 at position 0 is out of range"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({3, 1.5f, 0})),
                      Catch::Contains("target 1.5 at position 1 is not a class index"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({NAN, 1, 0})),
                      Catch::Contains("at position 0 is not a class index"));
}

TEST_CASE("cross_entropy shape and option errors name the shapes and values", "[loss]") {
  Tensor logits = sample_logits();
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::from_vector({1, 2})),
                      Catch::Contains("expected targets of shape [3]") && Catch::Contains("logits of shape [3, 4]") &&
                          Catch::Contains("got [2]"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::zeros({4, 3})), Catch::Contains("got [4, 3]"));
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::zeros({2, 3, 4}), Tensor::zeros({2})),
                      Catch::Contains("expected targets of shape [2, 4]") && Catch::Contains("got [2]"));
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::scalar(1), Tensor::scalar(0)),
                      Catch::Contains("expected logits of shape [N, C, *] or [C], got []"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Tensor::zeros({3, 4}), {.weight = Tensor::ones({3})}),
                      Catch::Contains("expected weight of shape [4]"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, sample_targets(), {.weight = Tensor::ones({3})}),
                      Catch::Contains("expected weight of shape [4]") && Catch::Contains("got [3]"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, sample_targets(), {.label_smoothing = 1.5}),
                      Catch::Contains("label_smoothing must be between 0.0 and 1.0, got 1.5"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, sample_targets(), {.label_smoothing = -0.1}), Catch::Contains("got -0.1"));
}

TEST_CASE("cross_entropy matches PyTorch's fixtures", "[loss]") {
  // scripts/fixtures/ops.py, cross_entropy_cases: logits 2 randn(6, 5), random targets with
  // some rows set to ignore_index, weight rand(5) + 0.5 when used; gradients of
  // sum(loss * grad_output). The options as in the generator's table:
  struct Spec {
    const char* tag;
    Reduction reduction;
    bool weighted;
    int64_t ignore_index;
    double label_smoothing;
  };
  const std::vector<Spec> specs = {
      {"mean", Reduction::Mean, false, -100, 0.0},
      {"sum", Reduction::Sum, false, -100, 0.0},
      {"none", Reduction::None, false, -100, 0.0},
      {"weight_mean", Reduction::Mean, true, -100, 0.0},
      {"weight_sum", Reduction::Sum, true, -100, 0.0},
      {"weight_none", Reduction::None, true, -100, 0.0},
      {"ignore_default_mean", Reduction::Mean, false, -100, 0.0},
      {"ignore_default_none", Reduction::None, false, -100, 0.0},
      {"ignore2_mean", Reduction::Mean, false, 2, 0.0},
      {"ignore2_sum", Reduction::Sum, false, 2, 0.0},
      {"ignore2_none", Reduction::None, false, 2, 0.0},
      {"smoothing_mean", Reduction::Mean, false, -100, 0.1},
      {"smoothing_sum", Reduction::Sum, false, -100, 0.25},
      {"smoothing_none", Reduction::None, false, -100, 0.1},
      {"weight_ignore_mean", Reduction::Mean, true, 3, 0.0},
      {"weight_smoothing_mean", Reduction::Mean, true, -100, 0.2},
      {"weight_smoothing_sum", Reduction::Sum, true, -100, 0.2},
      {"weight_smoothing_none", Reduction::None, true, -100, 0.2},
      {"weight_ignore_smoothing_mean", Reduction::Mean, true, 1, 0.3},
      {"weight_ignore_smoothing_none", Reduction::None, true, 1, 0.3},
      {"ignore_smoothing_sum", Reduction::Sum, false, 4, 0.1},
  };
  for (const Spec& spec : specs) {
    const std::string name = std::string("cross_entropy_") + spec.tag;
    INFO(name);
    minidl::testing::Fixture f(name);
    CrossEntropyOptions options{
        .ignore_index = spec.ignore_index, .reduction = spec.reduction, .label_smoothing = spec.label_smoothing};
    REQUIRE(f.has("weight") == spec.weighted);
    if (spec.weighted) options.weight = f["weight"];
    Tensor logits = f["input"].detach().clone().requires_grad_();
    Tensor loss = cross_entropy(logits, f["target"], options);
    check_close(loss, f["output"], 1e-5, 1e-5);
    sum(loss * f["grad_output"]).backward();
    check_close(logits.grad(), f["input.grad"], 1e-6, 1e-5);
  }
}

TEST_CASE("cross_entropy gives identical bits with 1 and 4 threads", "[loss][threads]") {
  // (2000, 50): above the size where its row loops run in parallel.
  Generator gen(11);
  const Tensor logits = Tensor::randn({2000, 50}, gen, 0.0f, 3.0f);
  const Tensor targets = Tensor::randint(0, 50, {2000}, gen);
  const CrossEntropyOptions options{.weight = Tensor::rand({50}, gen, 0.5f, 1.5f), .label_smoothing = 0.1};
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor x = logits.detach().clone().requires_grad_();
    Tensor loss = cross_entropy(x, targets, options);
    loss.backward();
    std::vector<float> out = x.grad().to_vector();
    out.push_back(loss.item());
    return out;
  };
  const int saved = get_num_threads();
  const std::vector<float> one = run(1);
  const std::vector<float> four = run(4);
  set_num_threads(saved);
  CHECK(one == four);  // exact equality
}

TEST_CASE("CrossEntropyLoss is a module: forward is cross_entropy, a weight is its buffer", "[loss]") {
  Generator gen(7);
  Tensor logits = Tensor::randn({4, 3}, gen);
  Tensor targets = Tensor::from_vector({0.0f, 2.0f, 1.0f, 2.0f});
  Tensor weight = Tensor::from_vector({1.0f, 0.5f, 2.0f});
  nn::CrossEntropyLoss criterion(nn::CrossEntropyLossOptions{.weight = weight, .label_smoothing = 0.1});
  check_close(criterion(logits, targets), cross_entropy(logits, targets, {.weight = weight, .label_smoothing = 0.1}),
              0.0, 0.0);
  const nn::StateDict state = criterion.state_dict();
  REQUIRE(state.size() == 1);
  CHECK(state[0].name == "weight");
  CHECK(nn::CrossEntropyLoss().state_dict().empty());
  Tensor input = Tensor::zeros({4, 3});
  CHECK_THROWS_WITH(criterion.forward(input),
                    "CrossEntropyLoss: expected forward(logits, targets), got forward(input) with input of shape "
                    "[4, 3] and no targets");
}

TEST_CASE("cross_entropy on (N, C, d1, ...) logits and on class probabilities matches PyTorch", "[loss][fixtures]") {
  // scripts/fixtures/ops.py, cross_entropy_nd_cases.
  const auto fixtures = minidl::testing::fixtures_of("cross_entropy_nd");
  CHECK(fixtures.size() == 8);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const nlohmann::json& o = fx.options();
    const std::string reduction = o.at("reduction");
    CrossEntropyOptions options{.weight = o.at("weight").get<bool>() ? fx["weight"] : Tensor(),
                                .ignore_index = o.at("ignore_index"),
                                .reduction = reduction == "mean"  ? Reduction::Mean
                                             : reduction == "sum" ? Reduction::Sum
                                                                  : Reduction::None,
                                .label_smoothing = o.at("label_smoothing")};
    minidl::testing::check_call(fx, "", [&](const Tensor& x) { return cross_entropy(x, fx["target"], options); });
  }
}

TEST_CASE("cross_entropy on (N, C, d) logits and class probabilities: gradients by finite differences", "[loss]") {
  Generator gen(41);
  using Inputs = const std::vector<Tensor>&;
  Tensor indices = Tensor::randint(0, 4, {2, 3}, gen);
  Tensor probabilities = exp(log_softmax(Tensor::randn({2, 4, 3}, gen), 1));
  for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const CrossEntropyOptions options{
        .weight = Tensor::from_vector({0.5f, 1, 2, 1.5f}), .reduction = reduction, .label_smoothing = 0.2};
    check_gradients([&](Inputs in) { return cross_entropy(in[0], indices, options); }, {Tensor::randn({2, 4, 3}, gen)});
    check_gradients([&](Inputs in) { return cross_entropy(in[0], probabilities, options); },
                    {Tensor::randn({2, 4, 3}, gen)});
  }
}

}  // namespace test_cross_entropy
