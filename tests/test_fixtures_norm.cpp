// minidl's norm layers against PyTorch 1.13 on the fixtures of scripts/fixtures/norms.py:
// BatchNorm1d/2d over a sequence of training and eval calls (outputs, input and parameter
// gradients, running statistics after every call), LayerNorm, RMSNorm and DyT (their formulas in PyTorch)
// and GroupNorm, each option and input rank. Values within 1e-5 absolute or 1e-4 relative;
// check_close reports the worst element.
#include <catch2/catch.hpp>
#include <memory>

#include "minidl/minidl.hpp"
#include "support/fixture.hpp"

namespace test_fixtures_norm {

using namespace minidl;
using minidl::testing::check_call;
using minidl::testing::check_close;
using minidl::testing::Fixture;
using minidl::testing::fixtures_of;

namespace {

Shape shape_from(const nlohmann::json& sizes) { return sizes.get<Shape>(); }

template <typename BatchNorm>
void check_batch_norm_fixtures(const std::string& module) {
  for (const Fixture& fx : fixtures_of(module)) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::BatchNormOptions options{o.at("num_features")};
      if (o.contains("momentum"))
        options.momentum = o.at("momentum").is_null() ? std::nullopt : std::optional<double>(o.at("momentum"));
      options.eps = o.value("eps", 1e-5);
      options.affine = o.value("affine", true);
      options.track_running_stats = o.value("track_running_stats", true);
      BatchNorm bn(options);
      bn.load_state_dict(fx.state_for(bn));

      const Tensor training = fx["training"];
      for (int64_t k = 0; k < training.numel(); ++k) {
        const std::string prefix = "step" + std::to_string(k) + ".";
        bn.train(training.data()[k] != 0.0f);
        INFO("call " << k << (bn.is_training() ? " (training)" : " (eval)"));
        check_call(
            fx, prefix, [&](const Tensor& x) { return bn(x); }, bn.named_parameters());
        for (const auto& [name, buffer] : bn.named_buffers()) {
          INFO(fx.name() << ": " << prefix << name << " after the call");
          check_close(buffer, fx[prefix + name], testing::kFixtureAtol, testing::kFixtureRtol);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("fixtures: BatchNorm1d matches PyTorch on (N, C) and (N, C, L), training and eval", "[fixtures]") {
  check_batch_norm_fixtures<nn::BatchNorm1d>("BatchNorm1d");
}

TEST_CASE("fixtures: BatchNorm2d matches PyTorch, training and eval", "[fixtures]") {
  check_batch_norm_fixtures<nn::BatchNorm2d>("BatchNorm2d");
}

TEST_CASE("fixtures: LayerNorm matches PyTorch over one and two trailing dims, affine and bias off", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("LayerNorm")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::LayerNormOptions options{shape_from(o.at("normalized_shape"))};
      options.eps = o.value("eps", 1e-5);
      options.elementwise_affine = o.value("elementwise_affine", true);
      options.bias = o.value("bias", true);
      nn::LayerNorm ln(options);
      ln.load_state_dict(fx.state_for(ln));
      check_call(
          fx, "", [&](const Tensor& x) { return ln(x); }, ln.named_parameters());
    }
  }
}

TEST_CASE("fixtures: RMSNorm matches its formula computed by PyTorch", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("RMSNorm")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::RMSNormOptions options{shape_from(o.at("normalized_shape"))};
      if (o.contains("eps")) options.eps = o.at("eps").get<double>();
      options.elementwise_affine = o.value("elementwise_affine", true);
      nn::RMSNorm rms(options);
      rms.load_state_dict(fx.state_for(rms));
      check_call(
          fx, "", [&](const Tensor& x) { return rms(x); }, rms.named_parameters());
    }
  }
}

TEST_CASE("fixtures: DyT matches its formula computed by PyTorch, channels last and first", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("DyT")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::DyT dyt(nn::DyTOptions{.normalized_shape = o.at("normalized_shape"),
                                 .alpha_init_value = o.value("alpha_init_value", 0.5),
                                 .channels_last = o.value("channels_last", true)});
      dyt.load_state_dict(fx.state_for(dyt));
      check_call(
          fx, "", [&](const Tensor& x) { return dyt(x); }, dyt.named_parameters());
    }
  }
}

TEST_CASE("fixtures: GroupNorm matches PyTorch for G = 1, G = C and between, ranks 2 to 4", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("GroupNorm")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::GroupNormOptions options{o.at("num_groups"), o.at("num_channels")};
      options.eps = o.value("eps", 1e-5);
      options.affine = o.value("affine", true);
      nn::GroupNorm gn(options);
      gn.load_state_dict(fx.state_for(gn));
      check_call(
          fx, "", [&](const Tensor& x) { return gn(x); }, gn.named_parameters());
    }
  }
}

}  // namespace test_fixtures_norm
