// minidl against PyTorch 1.13 on the fixtures of scripts/make_fixtures.py: Linear, Tanh,
// ReLU, log_softmax, cross_entropy (each option) and SGD (each option, several steps).
// Values within 1e-5 absolute or 1e-4 relative; check_close reports the worst element.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/fixture.hpp"

using namespace minidl;
using minidl::testing::check_call;
using minidl::testing::check_close;
using minidl::testing::Fixture;
using minidl::testing::fixtures_of;

TEST_CASE("fixtures: Linear matches PyTorch, with and without bias", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("Linear")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::Linear linear(o.at("in_features"), o.at("out_features"), o.at("bias").get<bool>());
      linear.load_state_dict(fx.state_for(linear));
      check_call(fx, "", [&](const Tensor& x) { return linear(x); }, linear.named_parameters());
    }
  }
}

TEST_CASE("fixtures: Tanh and ReLU match PyTorch (ReLU's gradient at 0 is 0)", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("Tanh")) {
    DYNAMIC_SECTION(fx.name()) {
      nn::Tanh tanh_module;
      check_call(fx, "", [&](const Tensor& x) { return tanh_module(x); });
    }
  }
  for (const Fixture& fx : fixtures_of("ReLU")) {
    DYNAMIC_SECTION(fx.name()) {
      nn::ReLU relu_module;
      check_call(fx, "", [&](const Tensor& x) { return relu_module(x); });
    }
  }
}

TEST_CASE("fixtures: log_softmax matches PyTorch on every dim, and on large logits", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("log_softmax")) {
    DYNAMIC_SECTION(fx.name()) {
      const int64_t dim = fx.options().at("dim");
      check_call(fx, "", [&](const Tensor& x) { return log_softmax(x, dim); });
    }
  }
}

namespace {

nn::Reduction reduction_named(const std::string& name) {
  if (name == "none") return nn::Reduction::None;
  if (name == "sum") return nn::Reduction::Sum;
  REQUIRE(name == "mean");
  return nn::Reduction::Mean;
}

}  // namespace

TEST_CASE("fixtures: cross_entropy matches PyTorch for each reduction, weight, ignore_index and smoothing",
          "[fixtures]") {
  for (const Fixture& fx : fixtures_of("cross_entropy")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::CrossEntropyOptions options;
      options.reduction = reduction_named(o.at("reduction"));
      options.ignore_index = o.at("ignore_index");
      options.label_smoothing = o.at("label_smoothing");
      if (o.at("weight").get<bool>()) options.weight = fx["weight"];
      const Tensor target = fx["target"];
      check_call(fx, "", [&](const Tensor& logits) { return nn::cross_entropy(logits, target, options); });
    }
  }
}

TEST_CASE("fixtures: SGD matches PyTorch step for step with each option", "[fixtures]") {
  const std::vector<std::string> names = {"p0", "p1"};
  for (const Fixture& fx : fixtures_of("SGD")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      optim::SGDOptions options{.lr = o.at("lr")};
      options.momentum = o.value("momentum", 0.0);
      options.dampening = o.value("dampening", 0.0);
      options.weight_decay = o.value("weight_decay", 0.0);
      options.nesterov = o.value("nesterov", false);
      options.maximize = o.value("maximize", false);
      std::vector<Tensor> params;
      for (const std::string& name : names) params.push_back(fx[name].requires_grad_(true));
      optim::SGD sgd(params, options);
      for (int step = 0; fx.has("step" + std::to_string(step) + ".p0"); ++step) {
        const std::string prefix = "step" + std::to_string(step) + ".";
        sgd.zero_grad();
        // loss = sum over parameters of sum(a * p * p) + sum(b * p), as the generator trains.
        Tensor loss = Tensor::scalar(0.0f);
        for (size_t k = 0; k < names.size(); ++k)
          loss = loss + sum(fx["a." + names[k]] * params[k] * params[k]) + sum(fx["b." + names[k]] * params[k]);
        loss.backward();
        for (size_t k = 0; k < names.size(); ++k) {
          INFO(fx.name() << ": " << prefix << names[k] << ".grad");
          check_close(params[k].grad(), fx[prefix + names[k] + ".grad"], testing::kFixtureAtol,
                      testing::kFixtureRtol);
        }
        sgd.step();
        for (size_t k = 0; k < names.size(); ++k) {
          INFO(fx.name() << ": " << prefix << names[k] << " after the step");
          check_close(params[k], fx[prefix + names[k]], testing::kFixtureAtol, testing::kFixtureRtol);
        }
      }
    }
  }
}

TEST_CASE("fixtures: every fixture file names a module these tests cover", "[fixtures]") {
  const std::vector<std::string> covered = {"Linear",  "Tanh",        "ReLU",        "log_softmax",
                                            "cross_entropy", "SGD",   "BatchNorm1d", "BatchNorm2d",
                                            "LayerNorm",     "RMSNorm", "GroupNorm"};
  int files = 0;
  for (const auto& file : std::filesystem::directory_iterator(testing::fixtures_dir())) {
    if (file.path().extension() != ".safetensors") continue;
    ++files;
    const std::string module = testing::read_safetensors_metadata(file.path().string()).value("module", "");
    INFO(file.path().filename().string() << " names module '" << module << "'");
    CHECK(std::find(covered.begin(), covered.end(), module) != covered.end());
  }
  CHECK(files >= 80);
}
