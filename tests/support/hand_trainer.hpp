#pragma once
// A reference for digits' trainer (training/digits_train.cpp with training/trainer_setup.cpp): the
// lesson's network trained on given batches with every step's update written out in double
// from PyTorch's documented formulas, so a test can hold the program's weights against it.
// Only the gradients come from the library (its backward is checked op by op elsewhere); the
// model is set to the reference's weights, rounded to float, before each step.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/digits.hpp"
#include "minidl/minidl.hpp"

namespace minidl::testing {

/// torch.optim.SGD with dampening 0 and nesterov off (all digits asks for), or Adam / AdamW
/// when adam_betas is set, preceded by clip_grad_norm_ when clip is set, with lr(step) the
/// learning rate of step 1, 2, ...
struct HandOptimizer {
  std::function<double(int64_t step)> lr;
  double momentum = 0.0;  // SGD
  double weight_decay = 0.0;
  std::optional<double> clip{};  // clip_grad_norm_'s max_norm (L2)
  std::optional<std::array<double, 2>> adam_betas{};
  bool decoupled_weight_decay = false;  // AdamW: p -= lr weight_decay p before the step
};

struct HandBatch {
  Tensor inputs;   // (n, 64)
  Tensor targets;  // (n)
};

/// The batches a batch order makes: each epoch's permutation of the training split cut into
/// consecutive chunks of batch_size, the last one short.
inline std::vector<HandBatch> batches_of(const data::DigitsSplit& data, const std::vector<std::vector<int64_t>>& order,
                                         int64_t batch_size) {
  const int64_t features = data.X_train.size(1);
  std::vector<HandBatch> batches;
  for (const std::vector<int64_t>& epoch : order) {
    for (size_t begin = 0; begin < epoch.size(); begin += size_t(batch_size)) {
      const int64_t n = int64_t(std::min(epoch.size() - begin, size_t(batch_size)));
      HandBatch batch{Tensor::empty({n, features}), Tensor::empty({n})};
      for (int64_t r = 0; r < n; ++r) {
        const int64_t row = epoch[begin + size_t(r)];
        std::copy_n(data.X_train.data() + row * features, features, batch.inputs.data() + r * features);
        batch.targets.data()[r] = data.y_train.data()[row];
      }
      batches.push_back(std::move(batch));
    }
  }
  return batches;
}

struct HandRun {
  std::vector<double> losses;                          // each step's batch loss
  std::map<std::string, std::vector<double>> weights;  // by state_dict name, after the last step
  int64_t clipped_steps = 0;                           // steps whose gradient norm exceeded clip
};

namespace detail {

// clip_grad_norm_: every gradient times max_norm / (total_norm + 1e-6) when that is below 1,
// total_norm being the L2 norm of all gradients together. Returns whether it scaled.
inline bool clip_total_norm(std::vector<std::vector<double>>& grads, double max_norm) {
  double squares = 0.0;
  for (const std::vector<double>& g : grads)
    for (double v : g) squares += v * v;
  const double coefficient = max_norm / (std::sqrt(squares) + 1e-6);
  if (coefficient >= 1.0) return false;
  for (std::vector<double>& g : grads)
    for (double& v : g) v *= coefficient;
  return true;
}

}  // namespace detail

namespace detail {

// One parameter's state between steps: SGD's momentum buffer, or Adam's two moments.
struct HandState {
  double first = 0.0, second = 0.0;
};

// The documented update of one value w with gradient g at step t (1-based):
//   SGD   g += weight_decay w; b = g at t = 1, else momentum b + g; w -= lr b
//   Adam  g += weight_decay w (AdamW instead: w -= lr weight_decay w); m = b1 m + (1 - b1) g;
//         v = b2 v + (1 - b2) g^2; w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + 1e-8)
inline void hand_update(double& w, double g, HandState& state, int64_t t, double lr, const HandOptimizer& o) {
  if (o.decoupled_weight_decay) {
    w -= lr * o.weight_decay * w;
  } else {
    g += o.weight_decay * w;
  }
  if (o.adam_betas) {
    const auto [b1, b2] = *o.adam_betas;
    state.first = b1 * state.first + (1.0 - b1) * g;
    state.second = b2 * state.second + (1.0 - b2) * g * g;
    const double m_hat = state.first / (1.0 - std::pow(b1, double(t)));
    const double v_hat = state.second / (1.0 - std::pow(b2, double(t)));
    w -= lr * m_hat / (std::sqrt(v_hat) + 1e-8);
    return;
  }
  if (o.momentum != 0.0) {
    state.first = t == 1 ? g : o.momentum * state.first + g;
    g = state.first;
  }
  w -= lr * g;
}

}  // namespace detail

/// Trains model from its current weights over batches, one optimizer step each.
inline HandRun hand_train(nn::Module& model, const std::vector<HandBatch>& batches, const HandOptimizer& optimizer) {
  nn::NamedTensors params = model.named_parameters();  // shares the model's storage
  std::vector<std::vector<double>> weights(params.size());
  std::vector<std::vector<detail::HandState>> states(params.size());
  for (size_t k = 0; k < params.size(); ++k)
    weights[k].assign(params[k].second.data(), params[k].second.data() + params[k].second.numel());
  HandRun run;
  model.train();
  for (size_t step = 0; step < batches.size(); ++step) {
    for (size_t k = 0; k < params.size(); ++k) {
      std::transform(weights[k].begin(), weights[k].end(), params[k].second.data(), [](double w) { return float(w); });
      params[k].second.zero_grad();
    }
    Tensor loss = cross_entropy(model(batches[step].inputs), batches[step].targets);
    run.losses.push_back(loss.item());
    loss.backward();
    std::vector<std::vector<double>> grads(params.size());
    for (size_t k = 0; k < params.size(); ++k)
      grads[k].assign(params[k].second.grad().data(), params[k].second.grad().data() + params[k].second.numel());
    if (optimizer.clip && detail::clip_total_norm(grads, *optimizer.clip)) ++run.clipped_steps;
    const double lr = optimizer.lr(int64_t(step) + 1);
    for (size_t k = 0; k < params.size(); ++k) {
      states[k].resize(weights[k].size());
      for (size_t i = 0; i < weights[k].size(); ++i)
        detail::hand_update(weights[k][i], grads[k][i], states[k][i], int64_t(step) + 1, lr, optimizer);
    }
  }
  for (size_t k = 0; k < params.size(); ++k) run.weights[params[k].first] = weights[k];
  return run;
}

/// The largest |actual - expected| / (atol + rtol |expected|) over a checkpoint's entries
/// (> 1: out of bounds), after checking that it holds exactly the expected names and sizes.
inline double worst_excess(const nn::StateDict& actual, const std::map<std::string, std::vector<double>>& expected,
                           double atol, double rtol) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0.0;
  for (const nn::StateEntry& entry : actual) {
    INFO(entry.name);
    REQUIRE(expected.count(entry.name) == 1);
    const std::vector<double>& want = expected.at(entry.name);
    REQUIRE(entry.value.numel() == int64_t(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const double excess = std::abs(double(entry.value.data()[i]) - want[i]) / (atol + rtol * std::abs(want[i]));
      if (!(excess <= worst)) worst = std::isnan(excess) ? INFINITY : excess;  // a NaN is out of bounds
    }
  }
  return worst;
}

}  // namespace minidl::testing
