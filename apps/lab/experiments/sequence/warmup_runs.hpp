#pragma once
// warmup_gap's runs: charlm in the cell of warmup_depth's map where
// post-LN without a warmup fails (width 128, 8 layers, AdamW lr 3e-3), trained in three arms.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "lab.hpp"
#include "training/charlm_train.hpp"

namespace minidl::lab::warmup {

/// A set-up: where the norm goes and whether the lr warms up.
struct Arm {
  const char* id;  // the CSV's "arm"
  charlm::Position position;
  bool warm;
};
/// Post-LN without a warmup, post-LN with one, pre-LN without one.
extern const Arm kArms[3];
extern const char* const kColours[3];  // one per arm in the pictures
constexpr double kLr = 3e-3;
const double kUniformLoss = std::log(27.0);  // ln 27, guessing: a run that diverged or did not finish

/// "post-LN, 50-step warmup".
std::string arm_name(const Arm& a, const Settings& s);
/// The records of that arm.
std::vector<Record> runs_of(const std::vector<Record>& records, const Arm& a);
/// A run's final validation loss, ln 27 when it did not finish.
double final_loss(const Record& r);
/// The set-up's text: the runs, then `more` and what --quick cuts.
std::string setup_text(const Settings& s, const std::string& more);
/// "charlm width 128, 8 layers, lr 0.003, 300 steps".
std::string conditions(const Settings& s);
/// A job per arm and seed, each seed run as seed + offset; each record carries its curve.
std::vector<Job> jobs(const Context& c, uint64_t seed_offset);
/// A picture's panel: each arm's training loss over steps, mean over seeds with a min-max band.
std::string loss_curves_panel(const std::vector<Record>& records, const Settings& s);

}  // namespace minidl::lab::warmup
