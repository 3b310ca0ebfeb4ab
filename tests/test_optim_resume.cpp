// A run resumed from saved state (model checkpoint, optimizer state file, schedule state and
// the data order's generator state) gives the same bits as the uninterrupted run; and the
// optimizer state file's structure and errors.
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <memory>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_optim_resume {

using namespace minidl;
using namespace minidl::optim;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("minidl_optim_resume_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Everything a training run holds: a small MLP, its optimizer, a warmup-then-cosine
// schedule, clipping, and a shuffling loader over fixed random data.
struct Run {
  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<SequentialLR> schedule;
  std::unique_ptr<data::DataLoader> loader;
  std::vector<float> losses;

  explicit Run(const MakeOptimizer& make) {
    Generator init(3), data(4);
    model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(6, 16, init), std::make_shared<nn::Tanh>(),
                                             std::make_shared<nn::Linear>(16, 4, init));
    optimizer = make(model->parameters());
    auto warmup = std::make_shared<LinearLR>(*optimizer, LinearLROptions{.start_factor = 0.2, .total_iters = 6});
    auto cosine = std::make_shared<CosineAnnealingLR>(*optimizer, CosineAnnealingLROptions{.T_max = 30});
    schedule = std::make_unique<SequentialLR>(*optimizer, std::vector<std::shared_ptr<LRScheduler>>{warmup, cosine},
                                              std::vector<int64_t>{6});
    const Tensor x = Tensor::randn({50, 6}, data), y = Tensor::randint(0, 4, {50}, data);
    loader =
        std::make_unique<data::DataLoader>(x, y, data::DataLoaderOptions{.batch_size = 8, .shuffle = true, .seed = 9});
  }

  void epochs(int n) {
    for (int e = 0; e < n; ++e)
      for (const data::Batch& batch : *loader) {
        optimizer->zero_grad();
        Tensor loss = cross_entropy((*model)(batch.inputs), batch.targets);
        loss.backward();
        nn::utils::clip_grad_norm_(model->parameters(), 0.5);
        optimizer->step();
        schedule->step();
        losses.push_back(loss.item());
      }
  }

  std::vector<float> weights() const {
    std::vector<float> out;
    for (const Tensor& p : model->parameters())
      for (float v : p.to_vector()) out.push_back(v);
    return out;
  }
};

const std::vector<std::pair<const char*, MakeOptimizer>> kOptimizers = {
    {"SGD",
     [](std::vector<Tensor> p) {
       return std::make_unique<SGD>(std::move(p), SGDOptions{.lr = 0.2, .momentum = 0.9, .nesterov = true});
     }},
    {"Adam",
     [](std::vector<Tensor> p) {
       return std::make_unique<Adam>(std::move(p), AdamOptions{.lr = 0.02, .amsgrad = true});
     }},
    {"AdamW",
     [](std::vector<Tensor> p) {
       return std::make_unique<AdamW>(std::move(p), AdamWOptions{.lr = 0.02, .weight_decay = 0.1});
     }},
};

}  // namespace

TEST_CASE("A resumed run gives the bits of the uninterrupted one", "[optim][resume]") {
  for (const auto& [name, make] : kOptimizers) {
    INFO(name);
    Run whole(make);
    whole.epochs(5);

    const auto dir = scratch(name);
    Run first(make);
    first.epochs(2);
    io::save_safetensors((dir / "model.safetensors").string(), first.model->state_dict());
    io::save_optimizer_state((dir / "optimizer.safetensors").string(), *first.optimizer);
    const SchedulerState schedule = first.schedule->state_dict();
    const Generator::State order = first.loader->generator().get_state();

    Run resumed(make);  // a new process: everything built afresh, then the saved state loaded
    resumed.model->load_state_dict(io::load_safetensors((dir / "model.safetensors").string()));
    io::load_optimizer_state((dir / "optimizer.safetensors").string(), *resumed.optimizer);
    resumed.schedule->load_state_dict(schedule);
    resumed.loader->generator().set_state(order);
    resumed.epochs(3);

    std::vector<float> losses = first.losses;
    losses.insert(losses.end(), resumed.losses.begin(), resumed.losses.end());
    CHECK(losses == whole.losses);
    CHECK(resumed.weights() == whole.weights());
    CHECK(resumed.optimizer->lr() == whole.optimizer->lr());
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("Without the optimizer state the resumed run differs (the test above can fail)", "[optim][resume]") {
  Run whole(kOptimizers[1].second);
  whole.epochs(3);
  Run first(kOptimizers[1].second);
  first.epochs(1);
  Run resumed(kOptimizers[1].second);
  resumed.model->load_state_dict(first.model->state_dict());
  resumed.schedule->load_state_dict(first.schedule->state_dict());
  resumed.loader->generator().set_state(first.loader->generator().get_state());
  resumed.epochs(2);
  CHECK(resumed.weights() != whole.weights());
}

TEST_CASE("The optimizer state file holds PyTorch's structure", "[optim][resume]") {
  const auto dir = scratch("structure");
  Tensor p = Tensor::from_vector({1.0f, 2.0f}).requires_grad_(), q = Tensor::zeros({2, 3}).requires_grad_();
  Adam adam({p, q}, {.lr = 0.01, .beta1 = 0.8, .amsgrad = true});
  p.set_grad(Tensor::from_vector({0.5f, -0.5f}));
  adam.step();  // q has no gradient: no state yet
  const std::string path = (dir / "adam.safetensors").string();
  io::save_optimizer_state(path, adam);
  io::Metadata metadata;
  nn::StateDict tensors = io::load_safetensors(path, metadata);
  std::vector<std::string> names;
  for (const nn::StateEntry& e : tensors) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq", "state.0.step"});
  CHECK(metadata.at("optimizer") == "Adam");
  CHECK(
      metadata.at("param_groups") ==
      R"([{"amsgrad":true,"betas":[0.8,0.999],"eps":1e-08,"lr":0.01,"maximize":false,"params":[0,1],"weight_decay":0.0}])");

  std::string kind;
  const OptimizerState read = io::read_optimizer_state(path, kind);
  CHECK(kind == "Adam");
  CHECK(read.state.size() == 2);
  CHECK(read.state[1].empty());
  CHECK(read.state[0].at("step").shape() == Shape{});
  CHECK(read.state[0].at("step").item() == 1.0f);

  AdamW adamw({p, q});
  REQUIRE_THROWS_WITH(io::load_optimizer_state(path, adamw), Catch::Contains("holds the state of Adam, not of AdamW"));
  Adam wrong_count({p});
  REQUIRE_THROWS_WITH(io::load_optimizer_state(path, wrong_count),
                      Catch::Contains("the state has 2 parameters, the optimizer has 1"));
  Tensor r = Tensor::zeros({3}).requires_grad_();
  Adam wrong_shape({r, q});
  REQUIRE_THROWS_WITH(io::load_optimizer_state(path, wrong_shape),
                      Catch::Contains("parameter 0's exp_avg should have shape [3], got [2]"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_state_dict refuses what does not fit, and changes nothing then", "[optim][resume]") {
  Tensor p = Tensor::from_vector({1.0f, 2.0f}).requires_grad_();
  SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  p.set_grad(Tensor::from_vector({1.0f, 1.0f}));
  sgd.step();
  OptimizerState state = sgd.state_dict();
  state.param_group["momentum"] = -1.0;
  REQUIRE_THROWS_WITH(sgd.load_state_dict(state), Catch::Contains("momentum=-1"));
  CHECK(sgd.options().momentum == 0.9);
  state = sgd.state_dict();
  state.param_group["nesterov"] = 1.0;
  REQUIRE_THROWS_WITH(sgd.load_state_dict(state), Catch::Contains("option nesterov should be a flag, got a number"));
  state = sgd.state_dict();
  state.param_group["betas"] = std::vector<double>{0.9, 0.99};
  REQUIRE_THROWS_WITH(sgd.load_state_dict(state), Catch::Contains("unknown option betas"));
  state = sgd.state_dict();
  state.state[0]["exp_avg"] = Tensor::zeros({2});
  REQUIRE_THROWS_WITH(sgd.load_state_dict(state), Catch::Contains("parameter 0 has an unknown entry exp_avg"));

  Adam adam({p});
  adam.step();
  OptimizerState moments = adam.state_dict();
  moments.state[0].erase("exp_avg_sq");
  REQUIRE_THROWS_WITH(adam.load_state_dict(moments), Catch::Contains("parameter 0 has no exp_avg_sq entry"));
  moments = adam.state_dict();
  moments.state[0]["step"] = Tensor::scalar(1.5f);
  REQUIRE_THROWS_WITH(adam.load_state_dict(moments), Catch::Contains("step should be a count >= 0, got 1.5"));
  moments = adam.state_dict();
  moments.param_group["amsgrad"] = true;
  REQUIRE_THROWS_WITH(adam.load_state_dict(moments),
                      Catch::Contains("amsgrad is on but parameter 0 has no max_exp_avg_sq"));
  moments = adam.state_dict();
  moments.param_group["betas"] = std::vector<double>{0.9};
  REQUIRE_THROWS_WITH(adam.load_state_dict(moments), Catch::Contains("betas should hold 2 values, got 1"));
  CHECK_FALSE(adam.options().amsgrad);
}

TEST_CASE("read_optimizer_state refuses files that are not one group's optimizer state", "[optim][resume]") {
  const auto dir = scratch("malformed");
  const std::string path = (dir / "state.safetensors").string();
  auto write = [&](const io::Metadata& metadata, const nn::StateDict& tensors = {}) {
    io::save_safetensors(path, tensors, metadata);
  };
  std::string kind;
  write({});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("not an optimizer state"));
  write({{"optimizer", "Adam"}, {"param_groups", R"([{"params": [0]}, {"params": [1]}])"}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind),
                      Catch::Contains("a list of one group") && Catch::Contains("got 2 groups"));
  write({{"optimizer", "Adam"}, {"param_groups", R"([{"params": [1]}])"}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("entry 0 is 1"));
  write({{"optimizer", "Adam"}, {"param_groups", "[{"}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("param_groups is not valid JSON"));
  write({{"optimizer", "Adam"}, {"param_groups", R"([{"params": [0], "lr": "fast"}])"}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("option lr is \"fast\""));
  write({{"optimizer", "SGD"}, {"param_groups", R"([{"params": [0]}])"}}, {{"momentum_buffer", Tensor::zeros({2})}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind),
                      Catch::Contains("tensor momentum_buffer is not named state.<parameter index>.<entry>"));
  for (const char* name : {"abc", "state.", "state.0", "state.x.momentum_buffer", "state.0."}) {
    INFO(name);
    write({{"optimizer", "SGD"}, {"param_groups", R"([{"params": [0]}])"}}, {{name, Tensor::zeros({2})}});
    REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("is not named state.<parameter index>"));
  }
  write({{"optimizer", "SGD"}, {"param_groups", R"([{"params": [0]}])"}},
        {{"state.1.momentum_buffer", Tensor::zeros({2})}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("is for parameter 1 but the group has 1"));
  write({{"optimizer", "SGD"}, {"param_groups", R"([{"params": [0]}])"}},
        {{"state.123456789012345678901234567890.momentum_buffer", Tensor::zeros({2})}});
  REQUIRE_THROWS_WITH(io::read_optimizer_state(path, kind), Catch::Contains("but the group has 1 parameters"));
  // foreach: null and PyTorch's implementation switches are accepted.
  write({{"optimizer", "SGD"},
         {"param_groups", R"([{"params": [0], "lr": 0.5, "foreach": null, "differentiable": false}])"}},
        {{"state.0.momentum_buffer", Tensor::ones({2})}});
  Tensor p = Tensor::zeros({2}).requires_grad_();
  SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  io::load_optimizer_state(path, sgd);
  CHECK(sgd.lr() == 0.5);
  CHECK(sgd.momentum_buffer(0).to_vector() == std::vector<float>{1.0f, 1.0f});
  std::filesystem::remove_all(dir);
}

}  // namespace test_optim_resume
