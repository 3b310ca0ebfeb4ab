#pragma once
// A tensor an op's backward needs, saved with its storage's version (PyTorch's
// SavedVariable): unpack() refuses to hand it back once an in-place write changed it.
#include <cstdint>
#include <string_view>

#include "minidl/tensor/error.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// What unpack() throws: the values a backward saved were changed in place since.
struct SavedTensorModified : Error {
  using Error::Error;
};

class SavedTensor {
 public:
  SavedTensor() = default;  // nothing saved: defined() is false
  /// Saves one of an op's inputs (detached: no reference to the graph).
  explicit SavedTensor(const Tensor& input);
  /// Saves the op's own output; `op` is the op's name, as given to record().
  static SavedTensor output(const Tensor& out, std::string_view op);

  bool defined() const { return tensor_.defined(); }
  /// The saved values; throws SavedTensorModified with PyTorch's message when the
  /// storage was written in place after saving.
  const Tensor& unpack() const {
    if (tensor_.defined() && tensor_.version() != version_) throw_modified();
    return tensor_;
  }

 private:
  [[noreturn]] void throw_modified() const;

  Tensor tensor_;              // detached: shares storage, holds no graph
  uint32_t version_ = 0;       // the storage's version when saved
  std::string_view producer_;  // the op that made it ("Exp"); empty for a leaf
};

}  // namespace minidl
