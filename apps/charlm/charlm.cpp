// charlm: a character-level transformer language model on a word list, in the style of
// makemore. For each requested norm, norm position and seed it trains the model, prints
// per norm and position the mean and range over seeds of the final losses, and can write
// new words with each trained model (--sample).
// Exit codes: 0 every run trained, 1 a run diverged or failed (the others still train and
// every output is written), 2 bad options or input files (nothing trained), 128 + the
// signal when interrupted.
#include <iostream>
#include <limits>

#include "data/batch_order.hpp"
#include "interrupt.hpp"
#include "options.hpp"
#include "output_checks.hpp"
#include "program.hpp"
#include "report.hpp"
#include "runs/distributed.hpp"
#include "sample.hpp"
#include "training/charlm_stats.hpp"

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

void check_files(const Settings& s) {
  std::vector<NamedFile> inputs{{"--data", s.data_file}}, outputs;
  std::vector<std::string> runs;
  for (NormKind norm : s.norms)
    for (Position position : s.positions) runs.push_back(run_name(norm, position));
  s.add_files(runs, inputs, outputs);
  if (s.attention) outputs.push_back({"--attention", s.attention->file});
  apps::check_outputs(inputs, outputs, s.save_dir);
}

// The --init-from weights of a run, checked against its model before anything trains.
std::optional<nn::StateDict> read_init(const Settings& s, const RunSpec& run) {
  if (s.init_from_dir.empty()) return std::nullopt;
  const std::string path = s.init_path(run_name(run.norm, run.position));
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
  bool failed = false;
  for (const RunResult& r : results) {
    if (!r.ok()) {
      if (!r.interrupted) std::cerr << "charlm: " << *r.failure << std::endl;
      failed = true;
    } else if (!s.save_dir.empty()) {
      failed |= !apps::write_reporting("charlm", [&] {
        io::save_safetensors(s.checkpoint_path(run_name(r.norm, r.position), r.seed), r.model->state_dict());
      });
    }
  }
  auto write = [&](const std::string& path, const std::string& bytes) {
    if (!path.empty()) failed |= !apps::write_reporting("charlm", [&] { io::write_file_atomically(path, bytes); });
  };
  write(s.curves, curves_csv(results));
  write(s.val_curves, val_curves_csv(results));
  write(s.summary, summary_json(s, results, apps::stop_signal()));
  write(s.stats, stats_csv(results));
  if (s.attention) write(s.attention->file, attention_csv(results, s.attention->word));
  if (!s.tensorboard.empty() || !s.report.empty())
    failed |= !apps::write_reporting("charlm", [&] {
      apps::write_comparisons(s, run_logs(s, results, train_words), summary_json(s, results, 0), "charlm",
                              results_table(s, results));
    });
  return apps::exit_code("charlm", failed, bool(std::cout));
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
      s.keep_quiet();
      s.samples = 0;
    }
    return run(s);
  });
}

}  // namespace

int main(int argc, char** argv) {
  apps::install_signal_handlers();
  return apps::guarded_main("charlm", [&] {
    std::optional<Settings> settings = parse_settings(argc, argv);
    if (settings && settings->distributed) return run_distributed(std::move(*settings));
    return settings ? run(std::move(*settings)) : 0;
  });
}
