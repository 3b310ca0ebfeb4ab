#pragma once
#include <algorithm>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace minidl {

/// A tensor's extent along each dimension, outermost first: a vector of int64_t that keeps up
/// to kInlineRank extents in itself. Every tensor header, view and gradient carries one, and
/// the lesson's step made about a hundred of them; as std::vector each was a heap allocation
/// and a free. Deeper shapes move to the heap, so any rank works.
class Shape {
 public:
  static constexpr size_t kInlineRank = 6;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  Shape() = default;
  Shape(std::initializer_list<int64_t> extents) { assign(extents.begin(), extents.end()); }
  explicit Shape(size_t rank, int64_t value = 0) { resize(rank, value); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& extents) { assign(extents.begin(), extents.end()); }
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) take(other);
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> extents) {
    assign(extents.begin(), extents.end());
    return *this;
  }
  ~Shape() = default;

  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(int64_t(*first));
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_(); }
  const int64_t* data() const { return data_(); }
  int64_t& operator[](size_t i) { return data_()[i]; }
  const int64_t& operator[](size_t i) const { return data_()[i]; }
  int64_t& front() { return data_()[0]; }
  const int64_t& front() const { return data_()[0]; }
  int64_t& back() { return data_()[size_ - 1]; }
  const int64_t& back() const { return data_()[size_ - 1]; }

  iterator begin() { return data_(); }
  iterator end() { return data_() + size_; }
  const_iterator begin() const { return data_(); }
  const_iterator end() const { return data_() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_t rank) {
    if (rank > capacity_) grow(rank);
  }
  void clear() { size_ = 0; }
  void resize(size_t rank, int64_t value = 0) {
    reserve(rank);
    std::fill(data_() + std::min(rank, size_), data_() + rank, value);
    size_ = rank;
  }
  void push_back(int64_t extent) {
    if (size_ == capacity_) grow(capacity_ * 2);
    data_()[size_++] = extent;
  }
  void pop_back() { --size_; }
  iterator insert(const_iterator at, int64_t extent) { return insert(at, size_t(1), extent); }
  iterator insert(const_iterator at, size_t count, int64_t extent) {
    const size_t i = size_t(at - begin());
    open_gap(i, count);
    std::fill(data_() + i, data_() + i + count, extent);
    return data_() + i;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator at, It first, It last) {
    const size_t i = size_t(at - begin()), count = size_t(std::distance(first, last));
    open_gap(i, count);
    std::copy(first, last, data_() + i);
    return data_() + i;
  }
  iterator insert(const_iterator at, std::initializer_list<int64_t> extents) {
    return insert(at, extents.begin(), extents.end());
  }
  iterator erase(const_iterator at) { return erase(at, at + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t i = size_t(first - begin()), count = size_t(last - first);
    std::copy(data_() + i + count, data_() + size_, data_() + i);
    size_ -= count;
    return data_() + i;
  }

  /// The extents as a std::vector (for APIs that take one, such as index lists).
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend auto operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  int64_t* data_() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data_() const { return heap_ ? heap_.get() : inline_; }

  void grow(size_t rank) {
    const size_t capacity = std::max(rank, kInlineRank * 2);
    auto bigger = std::make_unique<int64_t[]>(capacity);
    std::copy(data_(), data_() + size_, bigger.get());
    heap_ = std::move(bigger);
    capacity_ = capacity;
  }
  void open_gap(size_t at, size_t count) {
    reserve(size_ + count);
    std::copy_backward(data_() + at, data_() + size_, data_() + size_ + count);
    size_ += count;
  }
  void take(Shape& other) noexcept {
    heap_ = std::move(other.heap_);
    capacity_ = heap_ ? other.capacity_ : kInlineRank;
    size_ = other.size_;
    if (!heap_) std::copy(other.inline_, other.inline_ + other.size_, inline_);
    other.size_ = 0;
    other.capacity_ = kInlineRank;
  }

  int64_t inline_[kInlineRank] = {};
  std::unique_ptr<int64_t[]> heap_;  // set once the rank outgrows inline_
  size_t size_ = 0;
  size_t capacity_ = kInlineRank;
};

/// Product of the extents (1 for a scalar's empty shape).
int64_t numel(const Shape& shape);

/// "[2, 3]", the form every error message uses.
std::string to_string(const Shape& shape);

/// Maps a possibly negative dimension into [0, rank); throws if out of range.
int64_t normalize_dim(int64_t dim, int64_t rank);

/// Row-major strides (in elements) of a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);

/// NumPy broadcasting of two shapes; throws naming both if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace minidl
