// BackwardFn, a node's closure: called, moved, emptied and compared as std::function is,
// each closure destroyed exactly once, small and large closures alike (a block past the
// free lists' 256 bytes comes from operator new).
#include <array>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>

#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

// Counts its live copies through a shared counter.
struct Tracked {
  std::shared_ptr<int> live;
  explicit Tracked(std::shared_ptr<int> counter) : live(std::move(counter)) { ++*live; }
  Tracked(const Tracked& other) : live(other.live) { ++*live; }
  Tracked(Tracked&& other) noexcept : live(other.live) { ++*live; }
  ~Tracked() { --*live; }
};

}  // namespace

TEST_CASE("BackwardFn calls its closure, moves it and destroys it once", "[autograd]") {
  auto live = std::make_shared<int>(0);
  std::array<float, 80> padding{};  // 320 bytes: past the free lists' largest block
  padding[3] = 2.0f;
  {
    BackwardFn small([t = Tracked(live)](const Tensor& g) -> std::vector<Tensor> { return {g * 3.0f}; });
    BackwardFn large([t = Tracked(live), padding](const Tensor& g) -> std::vector<Tensor> {
      return {g * padding[3], Tensor()};
    });
    CHECK(*live == 2);
    const Tensor g = Tensor::full({2}, 1.5f);
    CHECK(small(g).front().at({1}) == 4.5f);
    const GradList two = large(g);  // a std::vector<Tensor>'s gradients, moved into a GradList
    CHECK(two.size() == 2);
    CHECK(two[0].at({0}) == 3.0f);
    CHECK_FALSE(two[1].defined());

    BackwardFn moved = std::move(small);
    CHECK(small == nullptr);
    CHECK(moved != nullptr);
    CHECK(*live == 2);  // moving hands the closure over: no copy, no destruction
    CHECK(moved(g).front().at({0}) == 4.5f);
    moved = std::move(large);  // the first closure dies, the second moves in
    CHECK(*live == 1);
    CHECK(moved(g).front().at({0}) == 3.0f);
    moved = nullptr;
    CHECK(*live == 0);
    CHECK_FALSE(moved);
    CHECK_THROWS_AS(moved(g), std::bad_function_call);
  }
  CHECK(*live == 0);
}

TEST_CASE("BackwardFn takes a closure returning a GradList, as the library's ops do", "[autograd]") {
  BackwardFn pooled([](const Tensor& g) -> GradList { return {g * 2.0f, Tensor(), g}; });
  const Tensor g = Tensor::full({2}, 1.5f);
  const GradList grads = pooled(g);
  REQUIRE(grads.size() == 3);
  CHECK(grads[0].at({1}) == 3.0f);
  CHECK_FALSE(grads[1].defined());
  CHECK(grads[2].same(g));  // returned as it is: no copy of the list's tensors
}

TEST_CASE("record() takes a closure holding move-only state", "[autograd]") {
  Tensor x = Tensor::full({3}, 2.0f).requires_grad_();
  auto factor = std::make_unique<float>(5.0f);  // a std::function could not hold this
  Tensor y = record(x.detach() * 5.0f, "TimesFive", {x},
                    [factor = std::move(factor)](const Tensor& g) -> std::vector<Tensor> { return {g * *factor}; });
  sum(y).backward();
  CHECK(x.grad().at({2}) == 5.0f);
}
