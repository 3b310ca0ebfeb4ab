#pragma once
// Fixtures of modules with several inputs or outputs (scripts/fixtures/attention.py): the
// module loads the fixture's state_dict, runs, and its outputs, input gradients and every
// parameter's gradient are compared with PyTorch's.
#include <string>
#include <vector>

#include "support/fixture_calls.hpp"

namespace minidl::testing {

/// The names of the module's state_dict, in order.
inline std::vector<std::string> state_dict_keys(const nn::Module& module) {
  std::vector<std::string> keys;
  for (const nn::StateEntry& entry : module.state_dict()) keys.push_back(entry.name);
  return keys;
}

/// Loads the fixture's state into module, checks its keys against PyTorch's list (the
/// options' "state_dict_keys"), then runs check_multi_call and compares each parameter's
/// gradient with `<name>.grad`.
inline void check_module_call(const Fixture& fx, nn::Module& module, const MultiCall& f) {
  INFO(fx.name());
  CHECK(state_dict_keys(module) == fx.options()["state_dict_keys"].get<std::vector<std::string>>());
  module.load_state_dict(fx.state_for(module));
  check_multi_call(fx, f);
  for (const auto& [name, p] : module.named_parameters()) {
    INFO(name << ".grad");
    REQUIRE(p.grad().defined());
    check_close(p.grad(), fx[name + ".grad"], kFixtureAtol, kFixtureRtol);
  }
}

}  // namespace minidl::testing
