#include "lesson.hpp"

#include <fstream>
#include <sstream>

namespace minidl::bench {
namespace {

std::ifstream open(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError(cat(path, ": cannot open the file"));
  return file;
}

std::vector<int64_t> read_indices(const std::string& path) {
  std::ifstream file = open(path);
  std::vector<int64_t> indices;
  for (int64_t index = 0; file >> index;) indices.push_back(index);
  return indices;
}

std::shared_ptr<nn::Module> mlp_norm(NormKind norm) {
  if (norm == NormKind::Batch) return std::make_shared<nn::BatchNorm1d>(64);
  if (norm == NormKind::Layer) return std::make_shared<nn::LayerNorm>(64);
  throw UsageError("the lesson's MLP has none, batch and layer");
}

std::shared_ptr<nn::Module> cnn_norm(NormKind norm, int64_t channels) {
  if (norm == NormKind::Batch) return std::make_shared<nn::BatchNorm2d>(channels);
  return std::make_shared<nn::GroupNorm>(norm == NormKind::Group ? 8 : 1, channels);
}

float evaluate(nn::Module& model, const Tensor& inputs, const Tensor& targets) {
  NoGradGuard no_grad;
  return cross_entropy(model(inputs), targets).item();
}

}  // namespace

LessonData load_lesson_data(const std::string& dir) {
  std::ifstream csv = open(dir + "/digits.csv");
  std::vector<float> pixels, labels;  // (rows, 64), (rows)
  for (std::string line; std::getline(csv, line);) {
    std::stringstream fields(line);
    std::string field;
    for (int column = 0; std::getline(fields, field, ','); ++column)
      (column < 64 ? pixels.push_back(std::stof(field) / 16.0f) : labels.push_back(std::stof(field)));
  }
  const auto rows = int64_t(labels.size());
  const Tensor images = Tensor::from_vector(pixels, {rows, 64}), targets = Tensor::from_vector(labels, {rows});
  const std::vector<int64_t> train = read_indices(dir + "/digits_train_indices.txt");
  const std::vector<int64_t> val = read_indices(dir + "/digits_test_indices.txt");
  return {select_rows(images, train), select_rows(targets, train), select_rows(images, val), select_rows(targets, val)};
}

std::shared_ptr<nn::Sequential> lesson_net(NormKind norm, Generator& gen) {
  auto model = std::make_shared<nn::Sequential>();
  for (int64_t block = 0, n_in = 64; block < 8; ++block, n_in = 64) {
    model->push_back(std::make_shared<nn::Linear>(nn::LinearOptions(n_in, 64).bias(norm == NormKind::None), gen));
    if (norm != NormKind::None) model->push_back(mlp_norm(norm));
    model->push_back(std::make_shared<nn::Tanh>());
  }
  model->push_back(std::make_shared<nn::Linear>(64, 10, gen));
  return model;
}

std::shared_ptr<nn::Sequential> lesson_cnn(NormKind norm, Generator& gen) {
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Unflatten>(1, Shape{1, 8, 8}));
  for (const nn::Conv2dOptions& conv :
       {nn::Conv2dOptions(1, 16, 3).padding(1), nn::Conv2dOptions(16, 32, 3).stride(2).padding(1),
        nn::Conv2dOptions(32, 32, 3).padding(1)}) {
    model->push_back(std::make_shared<nn::Conv2d>(conv, gen));
    if (norm != NormKind::None) model->push_back(cnn_norm(norm, conv.out_channels));
    model->push_back(std::make_shared<nn::ReLU>());
  }
  model->push_back(std::make_shared<nn::AdaptiveAvgPool2d>(1));
  model->push_back(std::make_shared<nn::Flatten>());
  model->push_back(std::make_shared<nn::Linear>(32, 10, gen));
  return model;
}

std::vector<float> train_lesson(const LessonData& data, const LessonRun& run) {
  Generator init(run.seed);
  const std::shared_ptr<nn::Sequential> model = lesson_net(run.norm, init);
  optim::SGD sgd(model->parameters(), {.lr = run.lr});
  data::DataLoader loader(data::TensorDataset(data.X_train, data.y_train),
                          {.batch_size = run.batch_size, .shuffle = true, .seed = run.seed});
  diagnostics::StatsRecorder stats(diagnostics::StatsOptions{.output_range = 1.0f});
  if (run.stats_every > 0) {
    int tanh = 0, linear = 0;
    for (size_t i = 0; i < model->size(); ++i) {
      if (dynamic_cast<nn::Tanh*>((*model)[i].get())) stats.watch_output(cat("tanh", ++tanh), *(*model)[i]);
      if (auto* layer = dynamic_cast<nn::Linear*>((*model)[i].get()))
        stats.watch_parameter(cat("linear", ++linear, ".weight"), layer->weight);
    }
  }
  std::vector<float> losses;
  for (int64_t epoch = 1; epoch <= run.epochs; ++epoch) {
    model->train();
    for (const data::Batch& batch : loader.epoch()) {
      sgd.zero_grad();
      const auto step = int64_t(losses.size()) + 1;
      const bool record = run.stats_every > 0 && (step % run.stats_every == 0 || step % loader.size() == 0);
      if (record) stats.arm(step);
      Tensor loss = cross_entropy((*model)(batch.inputs), batch.targets);
      loss.backward();
      losses.push_back(loss.item());
      if (run.stats_every > 0) stats.before_update();
      sgd.step();
      if (run.stats_every > 0) stats.after_update();
    }
    model->eval();
    (void)evaluate(*model, data.X_val, data.y_val);
  }
  (void)evaluate(*model, data.X_train, data.y_train);
  (void)evaluate(*model, data.X_val, data.y_val);
  return losses;
}

}  // namespace minidl::bench
