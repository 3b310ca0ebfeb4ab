// In-place writes and autograd, as PyTorch: a version counter per storage, checked when a
// backward unpacks what its forward saved.
#include <functional>
#include <string>

#include "support/check.hpp"

namespace test_autograd_inplace {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;

namespace {

const std::string kModified =
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.FloatTensor ";

// The message of what `f` throws, or "" when it throws nothing.
std::string thrown_by(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every in-place write bumps the storage's version, shared by views and detach", "[autograd][inplace]") {
  Tensor t = Tensor::zeros({2, 3});
  const uint32_t start = t.version();
  Tensor view = t.reshape({6});
  Tensor detached = t.detach();
  t.fill_(1.0f);
  CHECK(t.version() == start + 1);
  view.copy_(Tensor::ones({6}));
  detached.set({0, 1}, 2.0f);
  detached.zero_();
  CHECK(t.version() == start + 4);
  CHECK(view.version() == t.version());
  CHECK(detached.version() == t.version());
  t.bump_version();
  CHECK(view.version() == start + 5);
  Tensor other = Tensor::zeros({2, 3});
  const uint32_t other_start = other.version();
  t.fill_(3.0f);
  CHECK(other.version() == other_start);  // each storage its own count
  Tensor copy = t.clone();
  const uint32_t copy_start = copy.version();
  t.fill_(4.0f);
  CHECK(copy.version() == copy_start);
}

TEST_CASE("exp's saved output written in place: backward refuses, naming the op, shape and versions",
          "[autograd][inplace]") {
  // PyTorch 1.13: y = torch.exp(x); y.fill_(0); y.sum().backward() raises this message.
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor y = exp(x);
  y.fill_(0.0f);
  REQUIRE_THROWS_WITH(sum(y).backward(),
                      Contains(kModified + "[2]], which is output 0 of ExpBackward0, is at version 1; expected "
                                           "version 0 instead.") &&
                          Contains("The backward of ExpBackward0 needs it"));
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("a leaf written through detach(): the product's backward refuses", "[autograd][inplace]") {
  // z = sum(a * w); w.detach().fill_(5); z.backward(): before the check, a.grad came out as
  // [5, 5], computed from w's new values.
  Tensor a = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor w = Tensor::from_vector({3, 4}).requires_grad_();
  Tensor z = sum(a * w);
  w.detach().fill_(5.0f);
  CHECK(w.version() == 1);
  const std::string message = thrown_by([&] { z.backward(); });
  CHECK_THAT(message, Contains(kModified + "[2]] is at version 1; expected version 0 instead.") &&
                          Contains("The backward of MulBackward0 needs it"));
  CHECK(message.find("which is output") == std::string::npos);  // a leaf has no producer
  CHECK_FALSE(a.grad().defined());
}

TEST_CASE("an SGD step between a forward and its backward: the backward refuses", "[autograd][inplace][optim]") {
  Tensor w = Tensor::from_vector({1, 2}).requires_grad_();
  optim::SGD optimizer({w}, {.lr = 0.1});
  sum(w * w).backward();
  Tensor z = sum(w * w);
  optimizer.step();
  CHECK(w.version() == 1);
  REQUIRE_THROWS_WITH(z.backward(), Contains(kModified + "[2]] is at version 1; expected version 0 instead."));
}

TEST_CASE("writes after the backward, or before the forward, are fine", "[autograd][inplace]") {
  Tensor a = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor w = Tensor::from_vector({3, 4}).requires_grad_();
  w.detach().fill_(5.0f);  // before the forward: saved at version 1, unpacked at version 1
  Tensor z = sum(a * w);
  z.backward(/*retain_graph=*/true);
  check_close(a.grad(), {5, 5}, 0, 0);
  w.detach().fill_(6.0f);  // after: the next backward through the retained graph refuses
  REQUIRE_THROWS_WITH(z.backward(), Contains(kModified + "[2]] is at version 2; expected version 1 instead."));
}

TEST_CASE("a write through a view of a saved tensor is seen: the view shares the count", "[autograd][inplace]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 4}).requires_grad_();
  Tensor y = tanh(x);
  y.reshape({2, 2}).detach().set({1, 1}, 0.0f);
  REQUIRE_THROWS_WITH(sum(y).backward(), Contains(kModified + "[4]], which is output 0 of TanhBackward0"));
}

TEST_CASE("every op that saves a tensor checks it: inputs and outputs, fused norms included", "[autograd][inplace]") {
  // Each case: the op, the node's name, and which saved tensor gets written ("x", "w" or
  // "out"). Without the write the backward runs (so each case can fail).
  struct Case {
    const char* op;
    std::function<Tensor(const Tensor&, const Tensor&)> f;
    const char* written;
  };
  const std::vector<Case> cases = {
      {"Mul", [](const Tensor& x, const Tensor& w) { return x * w; }, "x"},
      {"Mul", [](const Tensor& x, const Tensor& w) { return x * w; }, "w"},
      {"Div", [](const Tensor& x, const Tensor& w) { return x / w; }, "w"},
      {"Div", [](const Tensor& x, const Tensor& w) { return x / w; }, "out"},
      {"Exp", [](const Tensor& x, const Tensor&) { return exp(x); }, "out"},
      {"Log", [](const Tensor& x, const Tensor&) { return log(x); }, "x"},
      {"Sqrt", [](const Tensor& x, const Tensor&) { return sqrt(x); }, "out"},
      {"Rsqrt", [](const Tensor& x, const Tensor&) { return rsqrt(x); }, "out"},
      {"Pow", [](const Tensor& x, const Tensor&) { return pow(x, 3.0f); }, "x"},
      {"Tanh", [](const Tensor& x, const Tensor&) { return tanh(x); }, "out"},
      {"Relu", [](const Tensor& x, const Tensor&) { return relu(x); }, "out"},
      {"Sigmoid", [](const Tensor& x, const Tensor&) { return sigmoid(x); }, "out"},
      {"Max", [](const Tensor& x, const Tensor&) { return max(x); }, "x"},
      {"LogSoftmax", [](const Tensor& x, const Tensor&) { return log_softmax(x, 1); }, "out"},
      {"Mm",
       [](const Tensor& x, const Tensor& w) {
         return matmul(x, w.reshape({3, 1}));
       },
       "x"},
      {"Mm",
       [](const Tensor& x, const Tensor& w) {
         return matmul(x, w.reshape({3, 1}));
       },
       "w"},
      {"Linear",
       [](const Tensor& x, const Tensor& w) {
         return linear(x, w.reshape({1, 3}), Tensor());
       },
       "x"},
      {"Linear",
       [](const Tensor& x, const Tensor& w) {
         return linear(x, w.reshape({1, 3}), Tensor());
       },
       "w"},
      {"NativeLayerNorm", [](const Tensor& x, const Tensor& w) { return layer_norm(x, {3}, w, Tensor()); }, "x"},
      {"NativeLayerNorm", [](const Tensor& x, const Tensor& w) { return layer_norm(x, {3}, w, Tensor()); }, "w"},
      {"RMSNorm", [](const Tensor& x, const Tensor& w) { return rms_norm(x, {3}, w); }, "x"},
      {"RMSNorm", [](const Tensor& x, const Tensor& w) { return rms_norm(x, {3}, w); }, "w"},
      {"NativeGroupNorm", [](const Tensor& x, const Tensor& w) { return group_norm(x, 1, w, Tensor()); }, "x"},
      {"NativeGroupNorm", [](const Tensor& x, const Tensor& w) { return group_norm(x, 1, w, Tensor()); }, "w"},
      {"NativeBatchNorm",
       [](const Tensor& x, const Tensor& w) { return batch_norm(x, Tensor(), Tensor(), w, Tensor(), true, 0.1, 1e-5); },
       "x"},
      {"NativeBatchNorm",
       [](const Tensor& x, const Tensor& w) { return batch_norm(x, Tensor(), Tensor(), w, Tensor(), true, 0.1, 1e-5); },
       "w"},
  };
  for (const Case& c : cases) {
    INFO(c.op << ", writing " << c.written);
    auto run = [&](bool write) {
      Tensor x = Tensor::from_vector({1, 2, 4, 3, 5, 7}, {2, 3}).requires_grad_();
      Tensor w = Tensor::from_vector({0.5f, 2, 3}).requires_grad_();
      Tensor out = c.f(x, w);
      REQUIRE(out.grad_fn() != nullptr);
      CHECK(out.grad_fn()->name == c.op);
      if (write) {
        const std::string which = c.written;
        (which == "x" ? x : which == "w" ? w : out).detach().fill_(0.25f);
      }
      return thrown_by([&] { sum(out).backward(); });
    };
    CHECK(run(false).empty());
    const std::string message = run(true);
    CHECK_THAT(message, Contains(kModified) && Contains("is at version 1; expected version 0 instead.") &&
                            Contains(cat("The backward of ", c.op, "Backward0 needs it")));
    if (std::string(c.written) == "out") CHECK_THAT(message, Contains(cat("which is output 0 of ", c.op, "Backward0")));
  }
}

TEST_CASE("an in-place write to a tensor in the graph joins the graph, as PyTorch's", "[autograd][inplace]") {
  // PyTorch 1.13, y = x * 2 with x = [1, 2] requiring grad, then y.sum().backward():
  //   y.fill_(0)  -> x.grad [0, 0];   y[0] = 7 -> x.grad [0, 2];
  //   y.copy_(s * 1) with s = [3, 4] requiring grad -> x.grad [0, 0], s.grad [1, 1].
  // Without the write joining the graph x.grad came out [2, 2] every time.
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  SECTION("fill_") {
    Tensor y = x * 2.0f;
    y.fill_(0.0f);
    CHECK(y.grad_fn()->name == "Fill");
    sum(y).backward();
    check_close(x.grad(), {0, 0}, 0, 0);
  }
  SECTION("set") {
    Tensor y = x * 2.0f;
    y.set({0}, 7.0f);
    sum(y).backward();
    check_close(x.grad(), {0, 2}, 0, 0);
  }
  SECTION("copy_") {
    Tensor s = Tensor::from_vector({3, 4}).requires_grad_();
    Tensor y = x * 2.0f;
    y.copy_(s * 1.0f);
    sum(y).backward();
    check_close(x.grad(), {0, 0}, 0, 0);
    check_close(s.grad(), {1, 1}, 0, 0);
  }
  SECTION("copy_ into a plain tensor makes it part of the graph") {
    Tensor y = Tensor::zeros({2});
    y.copy_(x * 3.0f);
    REQUIRE(y.requires_grad());
    sum(y).backward();
    check_close(x.grad(), {3, 3}, 0, 0);
  }
  SECTION("under NoGradGuard nothing is recorded") {
    Tensor y = x * 2.0f;
    {
      NoGradGuard no_grad;
      y.fill_(1.0f);
    }
    CHECK(y.grad_fn()->name == "Mul");
    sum(y).backward();  // Mul saved x, not y: the write leaves its gradient as it was
    check_close(x.grad(), {2, 2}, 0, 0);
  }
}

TEST_CASE("in-place writes into a leaf that requires grad: refused in grad mode, allowed under no_grad",
          "[autograd][inplace]") {
  // PyTorch 1.13: w.fill_(1) and w.copy_(a) raise this; under torch.no_grad() they work.
  const std::string message = "a leaf Variable that requires grad is being used in an in-place operation.";
  Tensor w = Tensor::from_vector({3, 4}).requires_grad_();
  REQUIRE_THROWS_WITH(w.fill_(1.0f), message);
  REQUIRE_THROWS_WITH(w.zero_(), message);
  REQUIRE_THROWS_WITH(w.copy_(Tensor::ones({2})), message);
  REQUIRE_THROWS_WITH(w.set({1}, 0.0f), message);
  check_close(w, {3, 4}, 0, 0);  // refused before writing
  CHECK(w.version() == 0);
  {
    NoGradGuard no_grad;
    w.fill_(1.0f);
    w.set({1}, 2.0f);
  }
  check_close(w, {1, 2}, 0, 0);
  CHECK(w.version() == 2);
  CHECK(w.is_leaf());
  w.detach().fill_(7.0f);  // detach() does not require grad: allowed, and seen by the version
  CHECK(w.version() == 3);
  Tensor plain = Tensor::zeros({2});
  plain.fill_(1.0f);  // a leaf that needs no gradient: allowed
  check_close(plain, {1, 1}, 0, 0);
}

TEST_CASE("an in-place write into a view in the graph is refused, not a silently wrong gradient",
          "[autograd][inplace]") {
  // PyTorch: y = x * 2; y.view(2, 1).fill_(0); y.sum().backward() gives x.grad [0, 0]
  // (CopySlices). minidl has no CopySlices: it refuses instead of leaving x.grad at [2, 2].
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor y = x * 2.0f;
  Tensor view = y.reshape({2, 1});
  REQUIRE_THROWS_WITH(view.fill_(0.0f), Contains("in-place write into a view (from reshape) of a tensor that requires "
                                                 "grad"));
  check_close(y, {2, 4}, 0, 0);  // refused before writing
  {
    NoGradGuard no_grad;
    view.fill_(0.0f);  // outside grad mode a view is plain memory
  }
  check_close(y, {0, 0}, 0, 0);
}

TEST_CASE("var keeps its own copy: a later write into its input does not change its gradient", "[autograd][inplace]") {
  // PyTorch saves var's input and raises on a write; minidl's var saves x - mean (a copy of
  // its own), so the gradient is that of the values it saw: 2 (x - mean) / (n - 1).
  Tensor x = Tensor::from_vector({1, 2, 6}).requires_grad_();
  Tensor v = var(x);
  x.detach().fill_(0.0f);
  v.backward();
  check_close(x.grad(), {-2, -1, 3}, 1e-6, 1e-6);
}

}  // namespace test_autograd_inplace
