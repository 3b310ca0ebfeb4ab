// The lesson's experiment through the library: deep_net, train_run, and the finding
// itself (a deep tanh network learns only with a norm layer), plus a replay of PyTorch's
// own runs from tests/fixtures/lesson.
#include <cmath>

#include "data/batch_order.hpp"
#include "support/check.hpp"
#include "support/datasets.hpp"
#include "training/digits_train.hpp"

namespace test_lesson {

using minidl::testing::digits_split;

using namespace minidl;
using lesson::NormKind;

namespace {

const std::string kLessonFixtures = std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures/lesson";

std::vector<std::string> state_names(const nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& entry : model.state_dict()) names.push_back(entry.name);
  return names;
}

}  // namespace

TEST_CASE("deep_net has PyTorch's layer order and state_dict names", "[lesson]") {
  auto plain = lesson::deep_net(NormKind::None);
  CHECK(plain->size() == 17);  // 8 x (Linear, Tanh) + Linear
  auto names = state_names(*plain);
  REQUIRE(names.size() == 18);
  CHECK(names.front() == "0.weight");
  CHECK(names[2] == "2.weight");
  CHECK(names.back() == "16.bias");

  auto batch = lesson::deep_net(NormKind::Batch);
  CHECK(batch->size() == 25);  // 8 x (Linear, BatchNorm1d, Tanh) + Linear
  nn::StateDict state = batch->state_dict();
  CHECK(state[2].name == "1.weight");
  CHECK(state[4].name == "1.running_mean");
  CHECK(state[6].name == "1.num_batches_tracked");
  CHECK(state[6].dtype == nn::DType::I64);
  CHECK(state.back().name == "24.bias");
  CHECK(state.back().value.shape() == Shape{10});
  CHECK((*batch)[22]->type_name() == "BatchNorm1d");
  CHECK((*batch)[23]->type_name() == "Tanh");

  int64_t parameters = 0;
  for (const Tensor& p : lesson::deep_net(NormKind::Layer)->parameters()) parameters += p.numel();
  CHECK(parameters == 8 * (64 * 64 + 64) + 8 * 128 + 64 * 10 + 10);
  CHECK((*lesson::deep_net(NormKind::RMS))[1]->type_name() == "RMSNorm");
  CHECK((*lesson::deep_net(NormKind::Group))[1]->type_name() == "GroupNorm");
  CHECK(lesson::deep_net(NormKind::Group, {.depth = 2, .width = 12, .groups = 3})->size() == 7);
}

TEST_CASE("deep_net draws its Linear layers from the seeded default generator", "[lesson]") {
  manual_seed(3);
  auto a = lesson::deep_net(NormKind::Batch);
  manual_seed(3);
  auto b = lesson::deep_net(NormKind::Batch);
  manual_seed(4);
  auto c = lesson::deep_net(NormKind::Batch);
  CHECK(a->parameters()[0].to_vector() == b->parameters()[0].to_vector());
  CHECK(a->parameters()[0].to_vector() != c->parameters()[0].to_vector());
}

TEST_CASE("norm names parse and print as the lesson writes them", "[lesson]") {
  for (NormKind norm :
       {NormKind::None, NormKind::Batch, NormKind::Layer, NormKind::RMS, NormKind::Group, NormKind::Instance})
    CHECK(lesson::parse_norm(lesson::short_name(norm)) == norm);
  CHECK(lesson::display_name(NormKind::None) == "no normalization");
  CHECK(lesson::display_name(NormKind::Batch) == "BatchNorm1d");
  CHECK(lesson::display_name(NormKind::RMS) == "RMSNorm");
  REQUIRE_THROWS_AS(lesson::parse_norm("weight"), UsageError);
  REQUIRE_THROWS_WITH(
      lesson::parse_norm("weight"),
      Catch::Contains("unknown norm \"weight\": choose from none, batch, layer, rms, group, instance, dyt"));
}

TEST_CASE("the lesson's finding: the deep tanh network learns only with a norm layer", "[lesson]") {
  const double ln10 = std::log(10.0);
  lesson::RunResult none = lesson::train_run(digits_split(), {.norm = NormKind::None});
  lesson::RunResult batch = lesson::train_run(digits_split(), {.norm = NormKind::Batch});
  lesson::RunResult layer = lesson::train_run(digits_split(), {.norm = NormKind::Layer});
  for (const auto* r : {&none, &batch, &layer}) {
    INFO(lesson::summary_line(*r));
    REQUIRE(r->ok());
    CHECK(r->curve.size() == 5 * 23);  // 1437 = 22 x 64 + 29: 23 steps an epoch
  }
  CHECK(std::abs(none.train_loss - ln10) < 0.05);
  CHECK(none.val_accuracy < 0.2f);
  CHECK(batch.train_loss < 0.6f);
  CHECK(batch.val_accuracy > 0.8f);
  CHECK(layer.train_loss < 0.6f);
  CHECK(layer.val_accuracy > 0.8f);
  CHECK(!batch.model->is_training());  // evaluated in eval mode
}

TEST_CASE("train_run reports each epoch and is deterministic for a seed", "[lesson]") {
  std::vector<lesson::EpochReport> reports;
  lesson::TrainOptions options{.norm = NormKind::Batch, .net = {.depth = 2, .width = 16}, .epochs = 3};
  lesson::RunResult first =
      lesson::train_run(digits_split(), options, [&](const lesson::EpochReport& r) { reports.push_back(r); });
  REQUIRE(reports.size() == 3);
  for (int64_t e = 0; e < 3; ++e) {
    CHECK(reports[size_t(e)].epoch == e + 1);
    CHECK(reports[size_t(e)].epochs == 3);
    double sum = 0;  // the mean of that epoch's 23 step losses
    for (const auto& s : first.curve)
      if (s.epoch == e + 1) sum += s.loss;
    CHECK(reports[size_t(e)].mean_loss == Approx(sum / 23).epsilon(1e-6));
  }
  CHECK(reports.back().val_accuracy == first.val_accuracy);  // same model, same split
  lesson::RunResult again = lesson::train_run(digits_split(), options);
  CHECK(lesson::curves_csv({first}) == lesson::curves_csv({again}));
  options.seed = 1;
  CHECK(lesson::curves_csv({first}) != lesson::curves_csv({lesson::train_run(digits_split(), options)}));
}

TEST_CASE("train_run replays a batch order: same order, same curve", "[lesson]") {
  const auto orders = data::read_batch_order(kLessonFixtures + "/batch_order.txt", 1437, 5);
  lesson::TrainOptions options{.norm = NormKind::Layer, .net = {.depth = 3, .width = 32}, .epochs = 2, .seed = 9};
  options.batch_order = {orders[0], orders[1]};
  lesson::RunResult a = lesson::train_run(digits_split(), options);
  options.seed = 10;  // the order comes from the file, the init from the seed
  lesson::RunResult b = lesson::train_run(digits_split(), options);
  options.seed = 9;
  lesson::RunResult c = lesson::train_run(digits_split(), options);
  CHECK(lesson::curves_csv({a}) == lesson::curves_csv({c}));
  CHECK(lesson::curves_csv({a}) != lesson::curves_csv({b}));
}

TEST_CASE("a loss that turns NaN stops the run, naming run, epoch and step", "[lesson]") {
  lesson::RunResult r = lesson::train_run(digits_split(), {.norm = NormKind::None, .net = {.depth = 2}, .lr = 1e38});
  REQUIRE(!r.ok());
  const lesson::StepLoss& last = r.curve.back();
  CHECK(!std::isfinite(last.loss));
  CHECK_THAT(*r.failure, Catch::Contains("run \"none\" (no normalization, seed 0)") &&
                             Catch::Contains(cat("at epoch ", last.epoch, ", step ", last.step)) &&
                             Catch::Contains("lower learning rate"));
  CHECK(std::isnan(r.train_loss));
  CHECK_THAT(lesson::summary_line(r), Catch::StartsWith("no normalization  diverged: loss"));
}

TEST_CASE("summary_line and curves_csv print as the lesson and the plot script expect", "[lesson]") {
  lesson::RunResult r;
  r.norm = NormKind::Batch;
  r.train_loss = 0.13380663f;
  r.val_accuracy = 0.96111113f;
  r.curve = {{1, 1, 2.3196554f}, {1, 2, 0.5f}};
  CHECK(lesson::summary_line(r) == "BatchNorm1d       training loss 0.134   val accuracy 0.961");
  r.norm = NormKind::None;
  CHECK(lesson::summary_line(r) == "no normalization  training loss 0.134   val accuracy 0.961");
  r.train_loss = 3.5386064e31f;  // digits --lr 1e30: finite, out of the usual range
  CHECK(lesson::summary_line(r) == "no normalization  training loss 3.539e+31   val accuracy 0.961");
  r.train_loss = 0.13380663f;
  CHECK(lesson::curves_csv({r}) == "run,seed,epoch,step,loss\nnone,0,1,1,2.31965542\nnone,0,1,2,0.5\n");
}

}  // namespace test_lesson
