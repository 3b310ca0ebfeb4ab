#pragma once
// PyTorch reference fixtures: tests/fixtures/<case>.safetensors, written by
// scripts/make_fixtures.py (file and tensor names: scripts/fixtures/common.py). Tensors are
// looked up by name. Each file's header also carries "__metadata__" with the case name, the
// module ("Linear", "BatchNorm1d", "cross_entropy", "SGD", ...) and its options as JSON, so
// a test can walk every fixture of a module and build the module from the file's options.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "minidl/io/safetensors.hpp"
#include "minidl/tensor/error.hpp"
#include "support/check.hpp"

namespace minidl::testing {

inline std::string fixtures_dir() { return std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures"; }

/// The JSON header's "__metadata__" object (load_safetensors skips it).
inline nlohmann::json read_safetensors_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char size_bytes[8] = {};
  in.read(reinterpret_cast<char*>(size_bytes), 8);
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | size_bytes[i];
  std::string header(size, '\0');
  in.read(header.data(), std::streamsize(size));
  if (!in.good()) throw Error(cat("cannot read the safetensors header of ", path));
  return nlohmann::json::parse(header).value("__metadata__", nlohmann::json::object());
}

class Fixture {
 public:
  /// Loads tests/fixtures/<name>.safetensors from the source tree.
  explicit Fixture(const std::string& name) : name_(name) {
    const std::string path = fixtures_dir() + "/" + name + ".safetensors";
    for (const nn::StateEntry& entry : io::load_safetensors(path)) tensors_[entry.name] = entry.value;
    const nlohmann::json meta = read_safetensors_metadata(path);
    module_ = meta.value("module", "");
    options_ = nlohmann::json::parse(meta.value("options", "{}"));
  }

  const std::string& name() const { return name_; }
  /// The module or function the case exercises, as the generator names it.
  const std::string& module() const { return module_; }
  /// The case's options (keyword arguments of the PyTorch call), as JSON.
  const nlohmann::json& options() const { return options_; }
  bool has(const std::string& key) const { return tensors_.count(key) > 0; }

  /// The tensor called key (I64 entries come as float); throws naming the fixture when absent.
  Tensor operator[](const std::string& key) const {
    auto found = tensors_.find(key);
    if (found == tensors_.end()) throw Error(cat("fixture ", name_, " has no tensor named ", key));
    return found->second;
  }

  /// The entries a module's state_dict names, copied from this file under prefix
  /// ("" for the state before the first call), for load_state_dict.
  nn::StateDict state_for(const nn::Module& module, const std::string& prefix = "") const {
    nn::StateDict state = module.state_dict();
    for (nn::StateEntry& entry : state) entry.value = (*this)[prefix + entry.name].clone();
    return state;
  }

 private:
  std::string name_, module_;
  nlohmann::json options_;
  std::map<std::string, Tensor> tensors_;
};

/// The case names (file stems) of every fixture, sorted.
inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& file : std::filesystem::directory_iterator(fixtures_dir()))
    if (file.path().extension() == ".safetensors") names.push_back(file.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Every fixture whose metadata names this module, sorted by case name; at least one.
inline std::vector<Fixture> fixtures_of(const std::string& module) {
  std::vector<Fixture> out;
  for (const std::string& name : fixture_names()) {
    Fixture fixture(name);
    if (fixture.module() == module) out.push_back(std::move(fixture));
  }
  INFO("no fixture for " << module << " in " << fixtures_dir());
  REQUIRE(!out.empty());
  return out;
}

/// Tolerances of the fixture comparison: 1e-5 absolute or 1e-4 relative.
constexpr double kFixtureAtol = 1e-5, kFixtureRtol = 1e-4;

/// Runs out = f(input) on a copy of the fixture's `<prefix>input`, then backward of
/// sum(out * grad_output), and compares the output, the input gradient and the gradient of
/// each named parameter with `<prefix>output`, `<prefix>input.grad`, `<prefix><name>.grad`.
/// Parameter gradients are dropped first, as the generator zeroes them before every call.
inline void check_call(const Fixture& fx, const std::string& prefix, const std::function<Tensor(const Tensor&)>& f,
                       const nn::NamedTensors& params = {}) {
  Tensor x = fx[prefix + "input"].clone();
  x.requires_grad_(true);
  for (const auto& named : params) Tensor(named.second).zero_grad();
  Tensor out = f(x);
  {
    INFO(fx.name() << ": " << prefix << "output");
    check_close(out, fx[prefix + "output"], kFixtureAtol, kFixtureRtol);
  }
  out.backward(fx[prefix + "grad_output"]);
  {
    INFO(fx.name() << ": " << prefix << "input.grad");
    check_close(x.grad(), fx[prefix + "input.grad"], kFixtureAtol, kFixtureRtol);
  }
  for (const auto& [name, p] : params) {
    INFO(fx.name() << ": " << prefix << name << ".grad");
    REQUIRE(p.grad().defined());
    check_close(p.grad(), fx[prefix + name + ".grad"], kFixtureAtol, kFixtureRtol);
  }
}

}  // namespace minidl::testing
