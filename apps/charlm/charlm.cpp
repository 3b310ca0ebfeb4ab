// charlm: a character-level transformer language model on a word list, in the style of
// makemore. For each requested norm, norm position and seed it trains the model, prints
// per norm and position the mean and range over seeds of the final losses, and can write
// new words with each trained model (--sample).
// Exit codes: 0 every run trained, 1 a run diverged or failed (the others still train and
// every output is written), 2 bad options or input files (nothing trained), 128 + the
// signal when interrupted.
#include <csignal>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>

#include "data/batch_order.hpp"
#include "interrupt.hpp"
#include "options.hpp"
#include "output_checks.hpp"
#include "report.hpp"
#include "run_logs.hpp"
#include "runs/distributed.hpp"
#include "sample.hpp"
#include "training/charlm_stats.hpp"

namespace fs = std::filesystem;
using namespace minidl;
using namespace minidl::charlm;
using apps::NamedFile;

namespace {

struct RunSpec {
  NormKind norm;
  Position position;
  uint64_t seed;
};

// Every norm and position once per seed: grouped by norm, then position, seeds in order.
std::vector<RunSpec> run_specs(const Settings& s) {
  std::vector<RunSpec> specs;
  for (NormKind norm : s.norms)
    for (Position position : s.positions)
      for (uint64_t seed : s.seeds) specs.push_back({norm, position, seed});
  return specs;
}

std::string init_path(const Settings& s, NormKind norm, Position position) {
  return (fs::path(s.init_from_dir) / (run_name(norm, position) + ".safetensors")).string();
}

// DIR/<run>.safetensors with one seed, DIR/<run>_seed<S>.safetensors with several.
std::string checkpoint_path(const Settings& s, const RunSpec& run) {
  const std::string name = run_name(run.norm, run.position);
  const std::string file = s.seeds.size() == 1 ? name : cat(name, "_seed", run.seed);
  return (fs::path(s.save_dir) / (file + ".safetensors")).string();
}

void check_files(const Settings& s) {
  std::vector<NamedFile> inputs{{"--data", s.data_file}}, outputs;
  if (!s.batch_order.empty()) inputs.push_back({"--batch-order", s.batch_order});
  for (const RunSpec& run : run_specs(s)) {
    if (!s.init_from_dir.empty()) inputs.push_back({"--init-from", init_path(s, run.norm, run.position)});
    if (!s.save_dir.empty()) outputs.push_back({"--save", checkpoint_path(s, run)});
  }
  if (!s.curves.empty()) outputs.push_back({"--curves", s.curves});
  if (!s.val_curves.empty()) outputs.push_back({"--val-curves", s.val_curves});
  if (!s.summary.empty()) outputs.push_back({"--summary", s.summary});
  if (!s.stats.empty()) outputs.push_back({"--stats", s.stats});
  if (!s.report.empty()) outputs.push_back({"--report", s.report});
  if (s.attention) outputs.push_back({"--attention", s.attention->file});
  apps::check_outputs(inputs, outputs, s.save_dir);
}

// The --init-from weights of a run, checked against its model before anything trains.
std::optional<nn::StateDict> read_init(const Settings& s, const RunSpec& run) {
  if (s.init_from_dir.empty()) return std::nullopt;
  const std::string path = init_path(s, run.norm, run.position);
  nn::StateDict state = io::load_safetensors(path);
  ModelOptions model = s.run.model;
  model.norm = run.norm;
  model.position = run.position;
  Generator gen(0);
  try {
    CharTransformer(model, gen).load_state_dict(state, /*strict=*/true);
  } catch (const Error& e) {
    throw UsageError(cat(path, " does not fit the ", run_name(run.norm, run.position), " model: ", e.what()));
  }
  return state;
}

void print_progress(const RunResult& r, int64_t step, int64_t steps) {
  char line[200];
  std::snprintf(line, sizeof line, "[%s seed %llu] step %lld/%lld  train loss %.4f  val loss %.4f  %.1f s\n",
                run_name(r.norm, r.position).c_str(), static_cast<unsigned long long>(r.seed),
                static_cast<long long>(step), static_cast<long long>(steps), double(r.train_loss), double(r.val_loss),
                r.seconds);
  std::cerr << line << std::flush;
}

void print_samples(const Settings& s, RunResult& r) {
  Generator gen(s.sample_seed);
  std::cout << "samples of " << run_name(r.norm, r.position) << " seed " << r.seed << ":\n";
  for (const std::string& word : sample_words(*r.model, s.samples, s.sample, gen)) std::cout << word << "\n";
  std::cout.flush();
}

// Writes one output, reporting a failure instead of stopping: the other outputs still go out.
template <typename Write>
bool write_reporting(Write&& write) {
  try {
    write();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "charlm: " << e.what() << std::endl;
    return false;
  }
}

std::vector<RunResult> train_all(const Settings& s, const WordSplit& data) {
  std::vector<RunResult> results;
  const ProgressCallback progress = s.quiet ? ProgressCallback() : print_progress;
  for (const RunSpec& run : run_specs(s)) {
    RunOptions options = s.run;
    options.model.norm = run.norm;
    options.model.position = run.position;
    options.seed = run.seed;
    options.init = read_init(s, run);
    try {
      results.push_back(train_run(data, options, progress));
    } catch (const std::exception& e) {
      if (options.parallel) throw;  // the other ranks wait for this one: end them all (run_distributed)
      results.push_back({.norm = run.norm, .position = run.position, .seed = run.seed});
      results.back().failure = cat("run \"", run_name(run.norm, run.position), "\" (seed ", run.seed, "): ", e.what());
      results.back().train_loss = results.back().val_loss = std::numeric_limits<float>::quiet_NaN();
    }
    if (results.back().ok() && s.samples > 0) print_samples(s, results.back());
  }
  return results;
}

int run(Settings s) {
  check_files(s);
  const WordSplit data = load_split(s.data_file, s.run.model.block_size - 1);
  const auto train_words = int64_t(data.train.size());
  check_against_data(s, train_words);
  if (!s.batch_order.empty()) {
    const int64_t epochs = epochs_for(s.run.steps, steps_per_epoch(train_words, s.run.batch_size));
    s.run.batch_order = data::read_batch_order(s.batch_order, train_words, epochs);
  }
  for (const RunSpec& run : run_specs(s)) read_init(s, run);  // every init fits before anything trains
  if (s.threads) set_num_threads(*s.threads);
  apps::prepare_save_directory(s.save_dir);
  s.run.stop = &apps::stop_requested();

  std::vector<RunResult> results = train_all(s, data);
  if (s.print) std::cout << results_table(s, results) << std::flush;
  bool failed = !std::cout;
  for (size_t i = 0; i < results.size(); ++i) {
    const RunResult& r = results[i];
    if (!r.ok()) {
      if (!r.interrupted) std::cerr << "charlm: " << *r.failure << std::endl;
      failed = true;
    } else if (!s.save_dir.empty()) {
      failed |=
          !write_reporting([&] { io::save_safetensors(checkpoint_path(s, run_specs(s)[i]), r.model->state_dict()); });
    }
  }
  auto write = [&](const std::string& path, const std::string& bytes) {
    if (!path.empty()) failed |= !write_reporting([&] { io::write_file_atomically(path, bytes); });
  };
  write(s.curves, curves_csv(results));
  write(s.val_curves, val_curves_csv(results));
  write(s.summary, summary_json(s, results, apps::stop_signal()));
  write(s.stats, stats_csv(results));
  if (s.attention) write(s.attention->file, attention_csv(results, s.attention->word));
  if (!s.tensorboard.empty() || !s.report.empty())
    failed |= !write_reporting([&] { write_comparisons(s, results, train_words); });
  if (!std::cout)
    std::cerr << "charlm: cannot write the results to standard output (closed or full); every output file was "
                 "still written"
              << std::endl;
  if (const int signal = apps::stop_signal()) {
    std::cerr << "charlm: interrupted by " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
              << ": the runs stopped at their next step; the curves and summary hold what ran" << std::endl;
    return 128 + signal;
  }
  return failed ? 1 : 0;
}

// --distributed: every rank runs the same runs; rank 0 alone prints and writes.
int run_distributed(Settings s) {
  // Batches are whole (the short last one dropped; run() refuses one larger than the split)
  // and every word holds 2 positions or more, so BatchNorm on a shard has its 2 values: only
  // the split of the batch itself can be refused.
  const apps::BatchSplit split{s.run.batch_size, /*drop_last=*/true, /*plain_batch_norm=*/false,
                               [] { return std::numeric_limits<int64_t>::max(); }};
  return apps::run_distributed("charlm", split, [&](std::shared_ptr<apps::DataParallel> parallel) {
    if (!s.threads) s.threads = apps::threads_per_rank();
    s.run.parallel = parallel;
    s.run.model.sync_batch_norm = s.sync_bn;
    if (parallel->rank() != 0) {
      s.quiet = true;
      s.print = false;
      s.samples = 0;
      s.curves.clear();
      s.val_curves.clear();
      s.summary.clear();
      s.tensorboard.clear();
      s.report.clear();
      s.save_dir.clear();
    }
    return run(s);
  });
}

}  // namespace

int main(int argc, char** argv) {
  apps::install_signal_handlers();
  try {
    std::optional<Settings> settings = parse_settings(argc, argv);
    if (settings && settings->distributed) return run_distributed(std::move(*settings));
    return settings ? run(std::move(*settings)) : 0;
  } catch (const UsageError& e) {
    std::cerr << "charlm: " << e.what() << std::endl;
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "charlm: " << e.what() << " (see charlm --help)" << std::endl;
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "charlm: out of memory" << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "charlm: error: " << e.what() << std::endl;
    return 1;
  }
}
