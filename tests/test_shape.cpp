// Shape: a vector of extents that keeps small ranks in itself. Each operation against
// std::vector<int64_t> doing the same, at ranks inside the inline capacity and past it.
#include <catch2/catch.hpp>
#include <vector>

#include "minidl/tensor/shape.hpp"
#include "minidl/tensor/tensor.hpp"

namespace test_shape {

using namespace minidl;

namespace {

std::vector<int64_t> counting(size_t rank) {
  std::vector<int64_t> v(rank);
  for (size_t i = 0; i < rank; ++i) v[i] = int64_t(i) + 2;
  return v;
}

void check_same(const Shape& s, const std::vector<int64_t>& v) {
  REQUIRE(s.size() == v.size());
  CHECK(s.to_vector() == v);
  CHECK(std::vector<int64_t>(s.rbegin(), s.rend()) == std::vector<int64_t>(v.rbegin(), v.rend()));
}

}  // namespace

TEST_CASE("Shape keeps its extents at every rank, inline and on the heap", "[shape]") {
  const size_t inline_rank = Shape::kInlineRank;
  for (size_t rank : {size_t(0), size_t(1), inline_rank - 1, inline_rank, inline_rank + 1, 3 * inline_rank}) {
    INFO("rank " << rank);
    const std::vector<int64_t> v = counting(rank);
    Shape s(v.begin(), v.end());
    check_same(s, v);
    CHECK(s.capacity() >= rank);

    Shape copy = s;
    check_same(copy, v);
    copy.push_back(99);
    check_same(s, v);  // the copy owns its extents

    Shape moved = std::move(copy);
    std::vector<int64_t> grown = v;
    grown.push_back(99);
    check_same(moved, grown);

    Shape assigned{7};
    assigned = moved;
    check_same(assigned, grown);
    assigned = std::move(s);
    check_same(assigned, v);

    Shape pushed;
    for (int64_t e : v) pushed.push_back(e);
    check_same(pushed, v);
    CHECK(pushed == Shape(v));
    CHECK((rank == 0 || pushed != Shape{}));
  }
}

TEST_CASE("Shape edits as std::vector does", "[shape]") {
  for (size_t rank : {size_t(2), Shape::kInlineRank, Shape::kInlineRank + 3}) {
    INFO("rank " << rank);
    std::vector<int64_t> v = counting(rank);
    Shape s(v);
    s.insert(s.begin() + 1, 40);
    v.insert(v.begin() + 1, 40);
    check_same(s, v);
    s.insert(s.end(), {5, 6, 7});
    v.insert(v.end(), {5, 6, 7});
    check_same(s, v);
    s.insert(s.begin(), size_t(2), int64_t(1));
    v.insert(v.begin(), size_t(2), int64_t(1));
    check_same(s, v);
    s.erase(s.begin() + 2);
    v.erase(v.begin() + 2);
    check_same(s, v);
    s.erase(s.begin(), s.begin() + 3);
    v.erase(v.begin(), v.begin() + 3);
    check_same(s, v);
    s.resize(rank + 9, 3);
    v.resize(rank + 9, 3);
    check_same(s, v);
    s.resize(1);
    v.resize(1);
    check_same(s, v);
    s.pop_back();
    CHECK(s.empty());
  }
  CHECK(Shape(size_t(3), 1) == Shape{1, 1, 1});
  CHECK(Shape{1, 2} < Shape{1, 3});
  CHECK(Shape{1, 2} < Shape{1, 2, 0});
}

TEST_CASE("a tensor of a rank past the inline capacity works as any other", "[shape]") {
  Shape deep(Shape::kInlineRank + 2, 1);
  deep.back() = 3;
  Tensor t = Tensor::ones(deep);
  CHECK(t.shape() == deep);
  CHECK(t.numel() == 3);
  Tensor r = t.reshape({3});
  CHECK(r.shape() == Shape{3});
  CHECK(r.reshape(deep).shape() == deep);
  CHECK(to_string(Shape{2, 3}) == "[2, 3]");
}

}  // namespace test_shape
