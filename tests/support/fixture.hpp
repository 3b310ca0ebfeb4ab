#pragma once
// PyTorch reference fixtures: tests/fixtures/<case>.safetensors, written by
// scripts/make_fixtures.py (its docstring documents the file and tensor names). Each file's
// header carries "__metadata__" with the case name, the module ("Linear", "BatchNorm1d",
// "cross_entropy", "SGD", ...) and its options as JSON, so a test walks every fixture of a
// module and builds the module from the file's own options.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"

namespace minidl::testing {

inline std::string fixtures_dir() { return std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures"; }

/// The JSON header's "__metadata__" object (load_safetensors skips it).
inline nlohmann::json read_safetensors_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  unsigned char size_bytes[8] = {};
  in.read(reinterpret_cast<char*>(size_bytes), 8);
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | size_bytes[i];
  std::string header(size, '\0');
  in.read(header.data(), std::streamsize(size));
  REQUIRE(in.good());
  return nlohmann::json::parse(header).value("__metadata__", nlohmann::json::object());
}

/// One fixture file: its tensors by name, its module and options.
class Fixture {
 public:
  explicit Fixture(const std::string& path) : path_(path) {
    for (nn::StateEntry& entry : io::load_safetensors(path)) tensors_[entry.name] = entry.value;
    nlohmann::json meta = read_safetensors_metadata(path);
    name_ = meta.value("case", std::filesystem::path(path).stem().string());
    module_ = meta.value("module", "");
    options_ = nlohmann::json::parse(meta.value("options", "{}"));
  }

  const std::string& name() const { return name_; }
  const std::string& module() const { return module_; }
  const nlohmann::json& options() const { return options_; }
  bool has(const std::string& key) const { return tensors_.count(key) > 0; }

  /// A copy of the named tensor (a test may train it in place).
  Tensor operator[](const std::string& key) const {
    INFO("fixture " << name_ << " has no tensor " << key);
    REQUIRE(has(key));
    return tensors_.at(key).clone();
  }

  /// The entries a module's state_dict names, taken from this file under prefix
  /// ("" for the initial state, "step3." for the state after call 3).
  nn::StateDict state_for(const nn::Module& module, const std::string& prefix = "") const {
    nn::StateDict state = module.state_dict();
    for (nn::StateEntry& entry : state) entry.value = (*this)[prefix + entry.name];
    return state;
  }

 private:
  std::string path_, name_, module_;
  nlohmann::json options_;
  std::map<std::string, Tensor> tensors_;
};

/// Every fixture whose metadata names this module, sorted by case name.
inline std::vector<Fixture> fixtures_of(const std::string& module) {
  std::vector<std::string> paths;
  for (const auto& file : std::filesystem::directory_iterator(fixtures_dir()))
    if (file.path().extension() == ".safetensors") paths.push_back(file.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<Fixture> out;
  for (const std::string& path : paths) {
    Fixture fixture(path);
    if (fixture.module() == module) out.push_back(std::move(fixture));
  }
  INFO("no fixture for " << module << " in " << fixtures_dir());
  REQUIRE(!out.empty());
  return out;
}

/// Tolerances of the fixture comparison: 1e-5 absolute or 1e-4 relative.
constexpr double kFixtureAtol = 1e-5, kFixtureRtol = 1e-4;

/// Runs out = f(input) on the fixture's `<prefix>input`, then backward of
/// sum(out * grad_output), and compares the output, the input gradient and the gradient of
/// each named parameter with `<prefix>output`, `<prefix>input.grad`, `<prefix><name>.grad`.
/// Parameter gradients are dropped first, as the generator zeroes them before every call.
inline void check_call(const Fixture& fx, const std::string& prefix, const std::function<Tensor(const Tensor&)>& f,
                       const nn::NamedTensors& params = {}) {
  Tensor x = fx[prefix + "input"];
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
