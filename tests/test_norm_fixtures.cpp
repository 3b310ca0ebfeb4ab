// Every norm layer against PyTorch 1.13's own results (tests/fixtures/, written by
// scripts/make_fixtures.py): outputs, input and parameter gradients, and for BatchNorm the
// running statistics after each call of a train/eval sequence. RMSNorm's fixtures come
// from its formula (PyTorch 1.13 has no RMSNorm).
#include <functional>
#include <map>
#include <memory>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"

using namespace minidl;
using minidl::testing::check_close;

namespace {

using Fixture = std::map<std::string, Tensor>;
using MakeModule = std::function<std::shared_ptr<nn::Module>()>;

Fixture load_fixture(const std::string& name) {
  Fixture out;
  for (const nn::StateEntry& entry :
       io::load_safetensors(std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures/" + name + ".safetensors"))
    out[entry.name] = entry.value;
  return out;
}

const Tensor& get(const Fixture& f, const std::string& name) {
  auto found = f.find(name);
  INFO("fixture tensor " << name);
  REQUIRE(found != f.end());
  return found->second;
}

// One call: forward on prefix+"input", backward of sum(output * grad_output), compared
// with PyTorch's output and gradients.
void check_call(nn::Module& m, const Fixture& f, const std::string& prefix) {
  m.zero_grad();
  Tensor x = get(f, prefix + "input").clone().requires_grad_();
  Tensor y = m(x);
  {
    INFO(prefix << "output");
    check_close(y, get(f, prefix + "output"), 1e-5, 1e-4);
  }
  sum(y * get(f, prefix + "grad_output")).backward();
  {
    INFO(prefix << "input.grad");
    check_close(x.grad(), get(f, prefix + "input.grad"), 1e-5, 1e-4);
  }
  for (const auto& [name, p] : m.named_parameters()) {
    INFO(prefix << name << ".grad");
    check_close(p.grad(), get(f, prefix + name + ".grad"), 1e-5, 1e-4);
  }
}

// The module's parameters and buffers take the fixture's values before the first call.
void load_state(nn::Module& m, const Fixture& f) {
  for (nn::StateEntry& entry : m.state_dict()) entry.value.copy_(get(f, entry.name));
}

struct Case {
  std::string fixture;
  MakeModule make;
};

template <typename M, typename Options>
MakeModule make(Options options) {
  return [options] { return std::make_shared<M>(options); };
}

}  // namespace

TEST_CASE("BatchNorm matches PyTorch over train/eval sequences", "[norm][batch_norm][fixtures]") {
  using nn::BatchNorm1d, nn::BatchNorm2d, nn::BatchNormOptions;
  const std::vector<Case> cases{
      {"batchnorm1d_nc", make<BatchNorm1d>(BatchNormOptions{4})},
      {"batchnorm1d_nc_momentum0.5", make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .momentum = 0.5})},
      {"batchnorm1d_nc_momentum_none",
       make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .momentum = std::nullopt})},
      {"batchnorm1d_nc_no_affine", make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .affine = false})},
      {"batchnorm1d_nc_no_running_stats",
       make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .track_running_stats = false})},
      {"batchnorm1d_ncl", make<BatchNorm1d>(BatchNormOptions{4})},
      {"batchnorm1d_ncl_momentum0.5", make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .momentum = 0.5})},
      {"batchnorm1d_ncl_momentum_none",
       make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .momentum = std::nullopt})},
      {"batchnorm1d_ncl_no_affine", make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .affine = false})},
      {"batchnorm1d_ncl_no_running_stats",
       make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .track_running_stats = false})},
      {"batchnorm1d_nc_eps0.1", make<BatchNorm1d>(BatchNormOptions{.num_features = 4, .eps = 0.1})},
      {"batchnorm1d_nc_eval_fresh", make<BatchNorm1d>(BatchNormOptions{4})},
      {"batchnorm1d_nc_two_rows", make<BatchNorm1d>(BatchNormOptions{3})},
      {"batchnorm2d", make<BatchNorm2d>(BatchNormOptions{3})},
      {"batchnorm2d_momentum0.5", make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .momentum = 0.5})},
      {"batchnorm2d_momentum_none", make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .momentum = std::nullopt})},
      {"batchnorm2d_no_affine", make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .affine = false})},
      {"batchnorm2d_no_running_stats",
       make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .track_running_stats = false})},
  };
  for (const Case& c : cases) {
    INFO("fixture " << c.fixture);
    const Fixture f = load_fixture(c.fixture);
    std::shared_ptr<nn::Module> m = c.make();
    load_state(*m, f);
    const Tensor& training = get(f, "training");
    for (int64_t k = 0; k < training.numel(); ++k) {
      const std::string prefix = "step" + std::to_string(k) + ".";
      m->train(training.data()[k] != 0.0f);
      check_call(*m, f, prefix);
      for (const auto& [name, buffer] : m->named_buffers()) {
        INFO(prefix << name);
        check_close(buffer, get(f, prefix + name), 1e-5, 1e-5);
      }
    }
  }
}

TEST_CASE("LayerNorm, RMSNorm and GroupNorm match PyTorch", "[norm][fixtures]") {
  using nn::GroupNorm, nn::GroupNormOptions, nn::LayerNorm, nn::LayerNormOptions, nn::RMSNorm, nn::RMSNormOptions;
  const std::vector<Case> cases{
      {"layernorm_2d", make<LayerNorm>(LayerNormOptions{{6}})},
      {"layernorm_3d_last", make<LayerNorm>(LayerNormOptions{{4}})},
      {"layernorm_3d_last2", make<LayerNorm>(LayerNormOptions{{3, 4}})},
      {"layernorm_no_affine", make<LayerNorm>(LayerNormOptions{.normalized_shape = {6}, .elementwise_affine = false})},
      {"layernorm_3d_last2_no_affine",
       make<LayerNorm>(LayerNormOptions{.normalized_shape = {3, 4}, .elementwise_affine = false})},
      {"layernorm_eps0.1", make<LayerNorm>(LayerNormOptions{.normalized_shape = {6}, .eps = 0.1})},
      {"layernorm_no_bias", make<LayerNorm>(LayerNormOptions{.normalized_shape = {6}, .bias = false})},
      {"layernorm_3d_last2_no_bias", make<LayerNorm>(LayerNormOptions{.normalized_shape = {3, 4}, .bias = false})},
      {"rmsnorm_2d", make<RMSNorm>(RMSNormOptions{{6}})},
      {"rmsnorm_3d_last", make<RMSNorm>(RMSNormOptions{{4}})},
      {"rmsnorm_3d_last2", make<RMSNorm>(RMSNormOptions{{3, 4}})},
      {"rmsnorm_no_affine", make<RMSNorm>(RMSNormOptions{.normalized_shape = {6}, .elementwise_affine = false})},
      {"rmsnorm_eps1e-6", make<RMSNorm>(RMSNormOptions{.normalized_shape = {6}, .eps = 1e-6})},
      {"rmsnorm_eps0.5", make<RMSNorm>(RMSNormOptions{.normalized_shape = {4}, .eps = 0.5})},
      {"groupnorm_3d_g1", make<GroupNorm>(GroupNormOptions{1, 6})},
      {"groupnorm_3d_g3", make<GroupNorm>(GroupNormOptions{3, 6})},
      {"groupnorm_3d_g6", make<GroupNorm>(GroupNormOptions{6, 6})},
      {"groupnorm_4d_g1", make<GroupNorm>(GroupNormOptions{1, 6})},
      {"groupnorm_4d_g2", make<GroupNorm>(GroupNormOptions{2, 6})},
      {"groupnorm_4d_g6", make<GroupNorm>(GroupNormOptions{6, 6})},
      {"groupnorm_3d_g3_no_affine", make<GroupNorm>(GroupNormOptions{.num_groups = 3, .num_channels = 6, .affine = false})},
      {"groupnorm_4d_g2_no_affine", make<GroupNorm>(GroupNormOptions{.num_groups = 2, .num_channels = 6, .affine = false})},
      {"groupnorm_2d_g2", make<GroupNorm>(GroupNormOptions{2, 6})},
      {"groupnorm_3d_g3_eps0.1", make<GroupNorm>(GroupNormOptions{.num_groups = 3, .num_channels = 6, .eps = 0.1})},
  };
  for (const Case& c : cases) {
    INFO("fixture " << c.fixture);
    const Fixture f = load_fixture(c.fixture);
    std::shared_ptr<nn::Module> m = c.make();
    load_state(*m, f);
    check_call(*m, f, "");
    m->eval();  // stateless: the same in eval
    check_call(*m, f, "");
  }
}
