#pragma once
// What warmup_map and warmup_gap share: charlm trained in three arms (post-LN without and with a
// learning-rate warmup, pre-LN without one) at a cell (width, depth, lr) for 300 steps, and the
// paired differences of their final validation losses.
#include <cstdint>
#include <string>
#include <vector>

#include "charlm_runs.hpp"

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
/// The warmup's gain that counts, in nats: a quarter of the way from trained (~2.2) to the letters' 2.94.
constexpr double kWarmupMatters = 0.2;

/// A point of the map: the model's width and depth and AdamW's lr.
struct Cell {
  int64_t width, layers;
  double lr;
};

/// 300 steps (6 with --quick), the first 50 (3) warming up.
int64_t steps(const Settings& s);
int64_t warmup_steps(const Settings& s);
/// "post-LN, 50-step warmup".
std::string arm_name(const Arm& a, const Settings& s);
/// "width 128, 8 layers, lr 0.003".
std::string cell_name(const Cell& c);
/// The records of that arm; of that arm in that cell.
std::vector<Record> runs_of(const std::vector<Record>& records, const Arm& a);
std::vector<Record> runs_of(const std::vector<Record>& records, const Cell& c, const Arm& a);
/// A run's final validation loss, ln 27 when it did not finish.
double final_loss(const Record& r);
/// Per seed, L(arm) - L(post-LN with the warmup), a run that did not finish counting ln 27.
std::vector<double> against_warm(const std::vector<Record>& arm_runs, const std::vector<Record>& warm_runs);
/// The arms' training, for the set-up's text.
std::string training_text(const Settings& s);
/// A job per arm and seed in the cell; each record carries the cell's keys, and its training
/// curve when `curves`.
std::vector<Job> jobs(const Context& c, const Cell& cell, const std::vector<uint64_t>& seeds, bool curves);
/// A picture's panel: each arm's training loss over steps, mean over seeds with a min-max band.
std::string loss_curves_panel(const std::vector<Record>& records, const Settings& s);

}  // namespace minidl::lab::warmup
