#pragma once
// BackwardFn: what a graph node runs in the backward, a closure from the gradient of its
// output to the gradients of its inputs. Used as a std::function would be (built from a
// lambda, moved, called, compared with and set to nullptr), but its closure's block comes
// from the library's per-thread free lists (pooled_allocator.hpp): an op's closure, holding
// its saved tensors, is some 50 to 150 bytes, past std::function's 16 inline ones, so every
// recorded op cost a malloc and a free for it. Move-only: a node owns its closure.
//
// A closure returns its gradients as a GradList, whose block comes from the same free
// lists, or as a std::vector<Tensor> (moved into a GradList): the library's ops return
// GradLists, since a std::vector's block was a malloc and a free per node of every step.
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "minidl/tensor/pooled_allocator.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// A backward's gradients, one per input in order (an undefined Tensor: none).
using GradList = std::vector<Tensor, detail::SmallBlockAllocator<Tensor>>;

class BackwardFn {
 public:
  BackwardFn() noexcept = default;
  BackwardFn(std::nullptr_t) noexcept {}  // NOLINT: as std::function converts from nullptr

  template <typename F>
  requires(!std::same_as<std::remove_cvref_t<F>, BackwardFn> &&
           (std::is_invocable_r_v<GradList, std::remove_cvref_t<F>&, const Tensor&> ||
            std::is_invocable_r_v<std::vector<Tensor>, std::remove_cvref_t<F>&, const Tensor&>))
      BackwardFn(F&& f) {  // NOLINT: as std::function converts from a lambda
    using Closure = std::remove_cvref_t<F>;
    static_assert(alignof(Closure) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the free lists' blocks align as new");
    void* block = detail::small_block_allocate(sizeof(Closure));
    try {
      closure_ = new (block) Closure(std::forward<F>(f));
    } catch (...) {
      detail::small_block_free(block, sizeof(Closure));
      throw;
    }
    ops_ = &kOps<Closure>;
  }

  BackwardFn(BackwardFn&& other) noexcept
      : closure_(std::exchange(other.closure_, nullptr)), ops_(std::exchange(other.ops_, nullptr)) {}
  BackwardFn& operator=(BackwardFn&& other) noexcept {
    if (this != &other) {
      reset();
      closure_ = std::exchange(other.closure_, nullptr);
      ops_ = std::exchange(other.ops_, nullptr);
    }
    return *this;
  }
  BackwardFn& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  BackwardFn(const BackwardFn&) = delete;
  BackwardFn& operator=(const BackwardFn&) = delete;
  ~BackwardFn() { reset(); }

  /// Throws std::bad_function_call when empty, as std::function.
  GradList operator()(const Tensor& grad_output) const {
    if (ops_ == nullptr) throw std::bad_function_call();
    return ops_->call(closure_, grad_output);
  }
  explicit operator bool() const noexcept { return ops_ != nullptr; }
  friend bool operator==(const BackwardFn& f, std::nullptr_t) noexcept { return !f; }

 private:
  static GradList as_grad_list(GradList grads) { return grads; }
  static GradList as_grad_list(std::vector<Tensor> grads) {
    return GradList(std::make_move_iterator(grads.begin()), std::make_move_iterator(grads.end()));
  }

  struct Ops {
    GradList (*call)(void* closure, const Tensor& grad_output);
    void (*destroy)(void* closure) noexcept;
  };
  template <typename Closure>
  static constexpr Ops kOps{[](void* closure, const Tensor& grad_output) -> GradList {
                              return as_grad_list((*static_cast<Closure*>(closure))(grad_output));
                            },
                            [](void* closure) noexcept {
                              static_cast<Closure*>(closure)->~Closure();
                              detail::small_block_free(closure, sizeof(Closure));
                            }};

  void reset() noexcept {
    if (ops_ != nullptr) ops_->destroy(closure_);
    closure_ = nullptr;
    ops_ = nullptr;
  }

  void* closure_ = nullptr;
  const Ops* ops_ = nullptr;
};

}  // namespace minidl
