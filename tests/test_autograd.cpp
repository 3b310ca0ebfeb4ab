// The autograd engine: recording, accumulation, freeing, errors, deep graphs.
#include "support/check.hpp"

namespace test_autograd {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;

TEST_CASE("ops record a node only when an input requires grad", "[autograd]") {
  Tensor a = Tensor::from_vector({1, 2});
  Tensor b = Tensor::from_vector({3, 4}).requires_grad_();
  Tensor plain = a * a;
  CHECK_FALSE(plain.requires_grad());
  CHECK(plain.grad_fn() == nullptr);
  Tensor y = a * b;
  CHECK(y.requires_grad());
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name == "Mul");
  CHECK_FALSE(y.is_leaf());
  CHECK(b.is_leaf());
  REQUIRE_THROWS_WITH(y.requires_grad_(false), Contains("non-leaf tensor: use detach() instead"));
}

TEST_CASE("backward of a small expression gives the hand-worked gradient", "[autograd]") {
  // f = sum((x * w + 1)^2), df/dx = 2 (x w + 1) w, df/dw = 2 (x w + 1) x
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor w = Tensor::from_vector({3, -1}).requires_grad_();
  Tensor f = sum(pow(x * w + 1.0f, 2.0f));
  CHECK(f.item() == 17.0f);  // 16 + 1
  f.backward();
  check_close(x.grad(), {24, 2}, 0, 0);
  check_close(w.grad(), {8, -4}, 0, 0);
}

TEST_CASE("gradients accumulate over two backward calls", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2, 3}).requires_grad_();
  SECTION("retain_graph, backward twice through the same graph") {
    Tensor y = sum(x * x);
    y.backward(true);
    check_close(x.grad(), {2, 4, 6}, 0, 0);
    y.backward();
    check_close(x.grad(), {4, 8, 12}, 0, 0);
  }
  SECTION("two separate forward passes") {
    sum(x * x).backward();
    sum(x * 3.0f).backward();
    check_close(x.grad(), {5, 7, 9}, 0, 0);
    x.zero_grad();
    CHECK_FALSE(x.grad().defined());
    sum(x).backward();
    check_close(x.grad(), {1, 1, 1}, 0, 0);
  }
}

TEST_CASE("a leaf's gradient is its own tensor", "[autograd]") {
  // The engine may adopt a gradient no one else holds; it must never alias one that is shared.
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor g = Tensor::from_vector({5, 6});
  x.backward(g);
  check_close(x.grad(), {5, 6}, 0, 0);
  x.grad().fill_(0.0f);
  check_close(g, {5, 6}, 0, 0);
  Tensor y = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor z = y.clone();  // Clone's backward hands on the very tensor it receives
  z.backward(g);
  g.fill_(1.0f);
  check_close(y.grad(), {5, 6}, 0, 0);
}

TEST_CASE("a gradient reaching a leaf along two paths is summed", "[autograd]") {
  Tensor x = Tensor::from_vector({2, 3}).requires_grad_();
  Tensor a = x * 3.0f;
  Tensor b = exp(x);
  Tensor c = a + b * a;  // diamond: a is used twice, x reaches c through a and b
  sum(c).backward();
  // dc/dx = 3 + e^x * 3x + e^x * 3
  std::vector<float> expected;
  for (float v : {2.0f, 3.0f}) expected.push_back(3 + std::exp(v) * 3 * v + std::exp(v) * 3);
  check_close(x.grad(), expected, 0, 1e-6);
  // x + x: one node handing the same gradient to both of its inputs.
  Tensor y = Tensor::from_vector({1, 1}).requires_grad_();
  Tensor h = y * 2.0f;
  sum(add(h, h)).backward();
  check_close(y.grad(), {4, 4}, 0, 0);
}

TEST_CASE("one gradient handed to two inputs is never changed in place", "[autograd]") {
  // Add's backward gives the same tensor to p and q; both then receive more from p * q.
  // Both orders of the two uses, since the visiting order decides which arrives first.
  for (bool add_first : {true, false}) {
    INFO("add first " << add_first);
    Tensor x = Tensor::from_vector({0.5f, 1.0f}).requires_grad_();
    Tensor p = x * 2.0f;
    Tensor q = exp(x);
    Tensor t = add_first ? (p + q) + p * q : p * q + (p + q);
    sum(t).backward();
    // d/dx (2x + e^x + 2x e^x) = 2 + 3 e^x + 2x e^x
    std::vector<float> expected;
    for (float v : {0.5f, 1.0f}) expected.push_back(2 + 3 * std::exp(v) + 2 * v * std::exp(v));
    check_close(x.grad(), expected, 0, 1e-6);
  }
}

TEST_CASE("NoGradGuard records nothing", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  {
    NoGradGuard guard;
    CHECK_FALSE(grad_enabled());
    Tensor y = linear(exp(x).reshape({1, 2}), x.reshape({1, 2}), Tensor());
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    CHECK_FALSE(sum(x).requires_grad());
    CHECK_FALSE(log_softmax(x).requires_grad());
    { NoGradGuard nested; }
    CHECK_FALSE(grad_enabled());  // the inner guard restores "off", not "on"
  }
  CHECK(grad_enabled());
  CHECK((x * 2.0f).requires_grad());
}

TEST_CASE("detach cuts the graph", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor y = x * x;
  Tensor z = y.detach() * x;  // only the direct path to x counts
  sum(z).backward();
  check_close(x.grad(), {1, 4}, 0, 0);
}

TEST_CASE("backward errors", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  SECTION("through a freed graph") {
    Tensor y = sum(exp(x));
    y.backward();
    REQUIRE_THROWS_WITH(y.backward(),
                        Contains("backward through the graph a second time") && Contains("retain_graph=true"));
  }
  SECTION("through a freed graph from a later use of an intermediate") {
    Tensor h = exp(x);
    sum(h).backward();
    REQUIRE_THROWS_WITH(sum(h * 2.0f).backward(), Contains("backward through the graph a second time (at Exp)"));
  }
  SECTION("on a non-scalar without a gradient") {
    REQUIRE_THROWS_WITH((x * 2.0f).backward(),
                        Contains("grad can be implicitly created only for scalar outputs") && Contains("shape [2]"));
  }
  SECTION("with a gradient of the wrong shape") {
    REQUIRE_THROWS_WITH((x * 2.0f).backward(Tensor::ones({3})),
                        Contains("grad_output has shape [3] but the tensor has shape [2]"));
  }
  SECTION("on a tensor that does not require grad") {
    REQUIRE_THROWS_WITH(sum(Tensor::ones({2})).backward(), Contains("does not require grad"));
  }
  SECTION("set_grad with the wrong shape") {
    REQUIRE_THROWS_WITH(x.set_grad(Tensor::zeros({3})), Contains("expected a gradient of shape [2], got [3]"));
  }
}

TEST_CASE("backward with an explicit gradient on a non-scalar", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2, 3}).requires_grad_();
  (x * x).backward(Tensor::from_vector({1, 0, -1}));
  check_close(x.grad(), {2, 0, -6}, 0, 0);
}

TEST_CASE("backward frees the saved state and intermediates, retain_graph keeps them", "[autograd]") {
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor y = sum(exp(x) * 2.0f);
  Node* node = y.grad_fn().get();
  y.backward(true);
  CHECK_FALSE(node->released);
  CHECK(node->backward != nullptr);
  y.backward();
  CHECK(node->released);
  CHECK(node->backward == nullptr);
  CHECK(node->inputs.empty());
}

TEST_CASE("a deep chain neither overflows the stack in backward nor on destruction", "[autograd]") {
  Tensor x = Tensor::from_vector({0.5f}).requires_grad_();
  SECTION("backward") {
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = y * 1.0f;
    y = sum(y);
    y.backward();
    check_close(x.grad(), {1}, 0, 0);
  }
  SECTION("destroying a graph that never ran backward") {
    // 300000 nested shared_ptr destructors overflow an 8 MiB stack without the
    // iterative teardown in ~Node.
    Tensor y = x;
    for (int i = 0; i < 300000; ++i) y = y + 0.0f;
    CHECK(y.requires_grad());
  }
}

TEST_CASE("a backward root that is a leaf", "[autograd]") {
  Tensor x = Tensor::scalar(3.0f).requires_grad_();
  x.backward();
  CHECK(x.grad().item() == 1.0f);
  x.backward();
  CHECK(x.grad().item() == 2.0f);
}

// The engine keeps its per-pass lists per thread between passes; a backward started inside
// another's hook must get lists of its own, and the outer pass must still finish right.
TEST_CASE("a backward run from a hook inside another backward gives both their gradients", "[autograd]") {
  Tensor a = Tensor::from_vector({1.0f, 2.0f}).requires_grad_();
  Tensor b = Tensor::from_vector({3.0f}).requires_grad_();
  for (int pass = 1; pass <= 2; ++pass) {
    a.zero_grad();
    b.zero_grad();
    Tensor other = sum(b * b * b);  // recorded before the outer backward starts
    Tensor y = a * 3.0f;
    y.register_hook([&](const Tensor&) { other.backward(); });
    sum(y * y).backward();
    INFO("pass " << pass);
    check_close(a.grad(), {18.0f, 36.0f}, 0, 0);  // d/da (3a)^2 = 18a
    check_close(b.grad(), {27.0f}, 0, 0);         // d/db b^3 = 3b^2
  }
}

}  // namespace test_autograd
