#pragma once
// Hook lists and the handle that removes one hook, as PyTorch's RemovableHandle: the
// handle holds no ownership (dropping it keeps the hook), remove() takes the hook out, and
// a handle outliving its module or tensor does nothing.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace minidl {

namespace detail {
/// What a handle can reach: the list that holds its hook.
struct HookRemover {
  virtual ~HookRemover() = default;
  virtual void remove(uint64_t id) = 0;
};
/// A process-wide counter, so no two hooks share an id.
uint64_t next_hook_id();
}  // namespace detail

class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<detail::HookRemover> list, uint64_t id) : list_(std::move(list)), id_(id) {}
  /// Takes the hook out of its list; a second call, or one after the owner is gone, does nothing.
  void remove() {
    if (auto list = list_.lock()) list->remove(id_);
    list_.reset();
  }
  uint64_t id() const { return id_; }

 private:
  std::weak_ptr<detail::HookRemover> list_;
  uint64_t id_ = 0;
};

/// Hooks in registration order. Callers run a copy (hooks()), so a hook may remove itself
/// or another while they run.
template <typename Fn>
class HookList : public detail::HookRemover {
 public:
  uint64_t add(Fn fn) {
    const uint64_t id = detail::next_hook_id();
    hooks_.emplace_back(id, std::move(fn));
    return id;
  }
  void remove(uint64_t id) override {
    for (auto it = hooks_.begin(); it != hooks_.end(); ++it)
      if (it->first == id) {
        hooks_.erase(it);
        return;
      }
  }
  bool empty() const { return hooks_.empty(); }
  std::vector<Fn> hooks() const {
    std::vector<Fn> out;
    out.reserve(hooks_.size());
    for (const auto& entry : hooks_) out.push_back(entry.second);
    return out;
  }

 private:
  std::vector<std::pair<uint64_t, Fn>> hooks_;
};

}  // namespace minidl
