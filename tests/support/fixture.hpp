#pragma once
// PyTorch reference fixtures (tests/fixtures/<case>.safetensors, written by
// scripts/make_fixtures.py): tensors looked up by name.
#include <map>
#include <string>

#include "minidl/io/safetensors.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::testing {

class Fixture {
 public:
  /// Loads tests/fixtures/<name>.safetensors from the source tree.
  explicit Fixture(const std::string& name) : name_(name) {
    for (const nn::StateEntry& entry : io::load_safetensors(std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures/" + name +
                                                            ".safetensors"))
      tensors_[entry.name] = entry.value;
  }
  bool has(const std::string& key) const { return tensors_.count(key) > 0; }
  /// The tensor called key (I64 entries come as float); throws naming the fixture when absent.
  Tensor operator[](const std::string& key) const {
    auto found = tensors_.find(key);
    if (found == tensors_.end()) throw Error(cat("fixture ", name_, " has no tensor named ", key));
    return found->second;
  }

 private:
  std::string name_;
  std::map<std::string, Tensor> tensors_;
};

}  // namespace minidl::testing
