// Optimizer state files move between minidl and torch.optim both ways: minidl saves after 3
// steps, scripts/check_optim_state_torch.py loads the file into PyTorch 1.13, takes 3 more
// steps and saves PyTorch's state; minidl's own 3 more steps land on PyTorch's values, and
// PyTorch's file loads back into minidl with the same state.
//
// A PyTorch cross-check: hidden ([.torch]) from the default run, which has no PyTorch to
// count on; ctest runs it as `torch.optim_state` through tests/torch/run_with_torch.sh, which
// skips it (exit 77) where the Python has no torch and exports MINIDL_PYTHON otherwise. Run
// by hand (`minidl_tests "[torch]"`) without torch, it fails.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/process.hpp"

namespace test_optim_state_torch {

using namespace minidl;
using namespace minidl::optim;
using minidl::testing::check_close;

namespace {

/// The Python with torch: MINIDL_PYTHON, as run_with_torch.sh exports it, else Debian's.
std::string python() {
  const char* chosen = std::getenv("MINIDL_PYTHON");
  return chosen != nullptr && *chosen != '\0' ? chosen : "/usr/bin/python3";
}

struct Problem {
  std::vector<Tensor> params, a, b;  // p0 (3, 4), p1 (5)
  explicit Problem(uint64_t seed) {
    Generator gen(seed);
    for (const Shape& shape : {Shape{3, 4}, Shape{5}}) {
      params.push_back(Tensor::randn(shape, gen).requires_grad_());
      a.push_back(Tensor::rand(shape, gen, 0.5f, 1.5f));
      b.push_back(Tensor::randn(shape, gen));
    }
  }
  // p1's term joins at step 3, so the saved state has no entry for it.
  void step(Optimizer& optimizer, int k) {
    optimizer.zero_grad();
    Tensor loss = sum(a[0] * params[0] * params[0]) + sum(b[0] * params[0]);
    if (k >= 3) loss = loss + sum(a[1] * params[1] * params[1]) + sum(b[1] * params[1]);
    loss.backward();
    optimizer.step();
  }
  void save(const std::string& path) const {
    nn::StateDict entries;
    for (size_t i = 0; i < 2; ++i) {
      entries.push_back({cat("a.p", i), a[i]});
      entries.push_back({cat("b.p", i), b[i]});
      entries.push_back({cat("p", i), params[i].detach()});
    }
    io::save_safetensors(path, entries);
  }
};

using Make = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;

}  // namespace

TEST_CASE("Optimizer states load into torch.optim and back", "[.torch]") {
  const auto dir = std::filesystem::temp_directory_path() / "minidl_optim_state_torch";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<const char*, Make>> kinds = {
      {"SGD",
       [](std::vector<Tensor> p) {
         return std::make_unique<SGD>(std::move(p),
                                      SGDOptions{.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01});
       }},
      {"Adam",
       [](std::vector<Tensor> p) {
         return std::make_unique<Adam>(std::move(p),
                                       AdamOptions{.lr = 0.03, .beta1 = 0.8, .amsgrad = true, .maximize = false});
       }},
      {"AdamW",
       [](std::vector<Tensor> p) {
         return std::make_unique<AdamW>(std::move(p), AdamWOptions{.lr = 0.04, .eps = 1e-6, .weight_decay = 0.2});
       }},
  };
  // minidl's first 3 steps for every optimizer, then one run of the script over all of them.
  std::vector<Problem> problems;
  std::vector<std::unique_ptr<Optimizer>> optimizers;
  std::vector<std::string> command = {python(), std::string(MINIDL_SOURCE_DIR) + "/scripts/check_optim_state_torch.py",
                                      "--steps", "3"};
  for (const auto& [name, make] : kinds) {
    const auto case_dir = dir / name;
    std::filesystem::create_directories(case_dir);
    problems.emplace_back(11);
    optimizers.push_back(make(problems.back().params));
    for (int k = 0; k < 3; ++k) problems.back().step(*optimizers.back(), k);
    problems.back().save((case_dir / "problem.safetensors").string());
    io::save_optimizer_state((case_dir / "minidl.safetensors").string(), *optimizers.back());
    command.insert(command.end(), {"--case", case_dir.string(), name});
  }
  const auto result = minidl::testing::run_process(command, dir);
  INFO(python() << " " << command[1] << " exited " << result.exit_code << "; stderr: " << result.err);
  REQUIRE(result.exit_code == 0);

  for (size_t c = 0; c < kinds.size(); ++c) {
    const auto& [name, make] = kinds[c];
    INFO(name);
    const auto case_dir = dir / name;
    Problem& problem = problems[c];
    Optimizer* optimizer = optimizers[c].get();
    for (int k = 3; k < 6; ++k) problem.step(*optimizer, k);
    nn::StateDict torch_params = io::load_safetensors((case_dir / "torch_params.safetensors").string());
    REQUIRE(torch_params.size() == 2);
    for (size_t i = 0; i < 2; ++i) check_close(problem.params[i], torch_params[i].value, 1e-6, 1e-5);

    auto loaded = make(problem.params);
    io::load_optimizer_state((case_dir / "torch.safetensors").string(), *loaded);
    const OptimizerState mine = optimizer->state_dict(), theirs = loaded->state_dict();
    CHECK(mine.param_group == theirs.param_group);
    for (size_t i = 0; i < 2; ++i) {
      REQUIRE(mine.state[i].size() == theirs.state[i].size());
      for (const auto& [key, value] : mine.state[i]) {
        INFO("parameter " << i << " " << key);
        if (key == "step") CHECK(theirs.state[i].at(key).item() == value.item());
        check_close(theirs.state[i].at(key), value, 1e-6, 1e-5);
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace test_optim_state_torch
