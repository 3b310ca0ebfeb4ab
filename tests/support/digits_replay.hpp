#pragma once
// A digits run the test can redo by hand: the lesson's network without norm (depth 2, width
// 16) from weights the test writes (--init-from), in batch orders the test writes
// (--batch-order), batches of 512 (3 steps an epoch), its trained weights saved (--save) and
// its curve written (--curves); by_hand() trains the same start on the same batches with the
// update written out (support/hand_trainer.hpp).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "minidl/io/safetensors.hpp"
#include "models/deep_net.hpp"
#include "support/digits_cli.hpp"
#include "support/hand_trainer.hpp"

namespace minidl::testing {

/// A permutation of 0..n-1 per epoch: i -> (i * stride + shift) mod n, shift moving by epoch.
/// stride must share no factor with n (1437 = 3 * 479).
inline std::vector<std::vector<int64_t>> strided_order(int64_t n, int64_t epochs, int64_t stride, int64_t shift) {
  std::vector<std::vector<int64_t>> order(static_cast<size_t>(epochs), std::vector<int64_t>(static_cast<size_t>(n)));
  for (int64_t e = 0; e < epochs; ++e)
    for (int64_t i = 0; i < n; ++i) order[size_t(e)][size_t(i)] = (i * stride + shift * (e + 1)) % n;
  return order;
}

class DigitsReplay {
 public:
  static constexpr int64_t kBatchSize = 512;

  struct Run {
    nn::StateDict weights;       // the saved model
    std::vector<double> losses;  // the curve, step by step
  };

  explicit DigitsReplay(uint64_t init_seed = 7) : data_(data::load_digits(kProjectData.string())) {
    Generator init(init_seed);
    io::save_safetensors(dir_.file("none.safetensors"),
                         lesson::deep_net(lesson::NormKind::None, net_, init)->state_dict());
  }

  int64_t train_examples() const { return data_.X_train.size(0); }

  /// digits trained in order (one permutation per epoch) with extra options added.
  Run run(const std::vector<std::vector<int64_t>>& order, const std::vector<std::string>& extra) const {
    std::vector<std::string> argv{kDigitsBinary,
                                  "--data",
                                  kProjectData.string(),
                                  "--quiet",
                                  "--norm",
                                  "none",
                                  "--seeds",
                                  "0",
                                  "--depth",
                                  "2",
                                  "--width",
                                  "16",
                                  "--batch-size",
                                  std::to_string(kBatchSize),
                                  "--epochs",
                                  std::to_string(order.size()),
                                  "--init-from",
                                  dir_.path().string(),
                                  "--batch-order",
                                  write_order(order),
                                  "--save",
                                  dir_.file("trained"),
                                  "--curves",
                                  dir_.file("curves.csv")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const ProcessResult result = run_process(argv, dir_.path());
    INFO("digits " << extra.size() << " extra options; stderr: " << result.err);
    REQUIRE(result.exit_code == 0);
    return {io::load_safetensors(dir_.file("trained/none.safetensors")), curve_losses(slurp(dir_.file("curves.csv")))};
  }

  /// The same start trained on the same batches by hand.
  HandRun by_hand(const std::vector<std::vector<int64_t>>& order, const HandOptimizer& optimizer) const {
    auto model = lesson::deep_net(lesson::NormKind::None, net_);
    model->load_state_dict(io::load_safetensors(dir_.file("none.safetensors")));
    return hand_train(*model, batches_of(data_, order, kBatchSize), optimizer);
  }

 private:
  std::string write_order(const std::vector<std::vector<int64_t>>& order) const {
    std::ostringstream text;
    for (const std::vector<int64_t>& epoch : order) {
      for (size_t i = 0; i < epoch.size(); ++i) text << (i ? " " : "") << epoch[i];
      text << "\n";
    }
    return dir_.write("order.txt", text.str());
  }

  // The loss column of "run,seed,epoch,step,loss" rows.
  static std::vector<double> curve_losses(const std::string& csv) {
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    REQUIRE(line == "run,seed,epoch,step,loss");
    std::vector<double> losses;
    while (std::getline(lines, line)) losses.push_back(std::stod(line.substr(line.rfind(',') + 1)));
    return losses;
  }

  TempDir dir_;
  data::DigitsSplit data_;
  lesson::DeepNetOptions net_{.depth = 2, .width = 16};
};

}  // namespace minidl::testing
