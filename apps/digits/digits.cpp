// digits: the lesson's experiment from the command line. For each requested norm and seed it
// seeds, builds the deep tanh network, trains it with SGD on the handwritten digits, and
// prints per norm the mean and range over seeds of the final figures (one seed: the lesson's
//   <name> training loss X.XXX   val accuracy Y.YYY).
// Exit codes: 0 all runs trained, 1 a run diverged, was refused or failed (the others still
// train and every output is written) or the machine cannot give what the runs need (an
// address-space limit, memory: nothing trained), 2 bad options or input files (nothing trained).
#include "data/digits.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "address_limit.hpp"
#include "data/batch_order.hpp"
#include "interrupt.hpp"
#include "minidl/minidl.hpp"
#include "options.hpp"
#include "output_checks.hpp"
#include "program.hpp"
#include "report.hpp"
#include "runs/distributed.hpp"
#include "runs/run_stats.hpp"
#include "runs/seeds.hpp"
#include "training/digits_train.hpp"

namespace fs = std::filesystem;
using namespace minidl;
using namespace minidl::digits;
using namespace minidl::apps;
using lesson::NormKind;

namespace {

// Reads DIR/<run>.safetensors for every run and checks it fits, before any training.
std::vector<std::optional<nn::StateDict>> read_inits(const Settings& s) {
  std::vector<std::optional<nn::StateDict>> inits(s.norms.size());
  if (s.init_from_dir.empty()) return inits;
  for (size_t i = 0; i < s.norms.size(); ++i) {
    const std::string path = s.init_path(lesson::short_name(s.norms[i]));
    inits[i] = io::load_safetensors(path);
    Generator gen(0);
    auto model = lesson::build_model(s.norms[i], s.train.net, s.train.model, gen);
    try {
      model->load_state_dict(*inits[i], /*strict=*/true);
    } catch (const Error& e) {
      const lesson::Arch arch = s.train.model.arch;
      throw UsageError(cat(path, " does not fit ", arch == lesson::Arch::MLP ? "deep_net" : lesson::arch_name(arch),
                           "(", lesson::short_name(s.norms[i]), "): ", e.what()));
    }
  }
  return inits;
}

// The files the runs read and write, checked before anything is read.
void check_files(const Settings& s) {
  std::vector<NamedFile> inputs, outputs;
  for (const char* name : {"digits.csv", "digits_train_indices.txt", "digits_test_indices.txt"})
    inputs.push_back({"--data", (fs::path(s.data_dir) / name).string()});
  std::vector<std::string> runs;
  for (NormKind norm : s.norms) runs.push_back(lesson::short_name(norm));
  s.add_files(runs, inputs, outputs);
  check_outputs(inputs, outputs, s.save_dir);
}

// --summary-model: each norm's model as a table on stdout, nothing trained.
int print_model_summaries(const Settings& s) {
  for (NormKind norm : s.norms) {
    Generator gen(0);
    auto model = lesson::build_model(norm, s.train.net, s.train.model, gen);
    std::cout << lesson::arch_name(s.train.model.arch) << " with " << lesson::display_name(norm) << "\n"
              << nn::summary(*model);
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

// One whole line per call, so lines of runs training at once never interleave mid-line.
void print_progress(const lesson::EpochReport& r) {
  char line[200];
  std::snprintf(line, sizeof line, "[%s seed %llu] epoch %lld/%lld  mean loss %s  val accuracy %s  %.2f s\n",
                lesson::short_name(r.norm).c_str(), static_cast<unsigned long long>(r.seed),
                static_cast<long long>(r.epoch), static_cast<long long>(r.epochs),
                lesson::figure_text(r.mean_loss, 4).c_str(), lesson::figure_text(r.val_accuracy).c_str(), r.seconds);
  std::cerr << line << std::flush;
}

// The runs: every norm once per seed, grouped by norm in the order asked for, seeds in their order.
std::vector<lesson::TrainOptions> run_options(const Settings& s,
                                              const std::vector<std::optional<nn::StateDict>>& inits) {
  std::vector<lesson::TrainOptions> runs;
  for (size_t n = 0; n < s.norms.size(); ++n)
    for (uint64_t seed : s.seeds) {
      runs.push_back(s.train);
      runs.back().norm = s.norms[n];
      runs.back().seed = seed;
      runs.back().init = inits[n];
    }
  return runs;
}

// The runs' indices, those with a norm layer (the longer ones) first: on 2 cores the
// lesson's none, batch, layer then end when the longest does, not one run after it.
std::vector<size_t> longest_first(const std::vector<lesson::TrainOptions>& runs) {
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return runs[i].norm != NormKind::None; });
  return order;
}

// Trains every run that was not refused, up to s.jobs at once, each on its own thread. A run
// owns its generators (init and shuffling), so the results equal those of running them one
// by one. A run that throws is reported in its result; the others go on.
std::vector<lesson::RunResult> train_all(const Settings& s, const std::vector<lesson::TrainOptions>& runs,
                                         const data::DigitsSplit& data,
                                         const std::vector<std::optional<std::string>>& refused) {
  std::vector<lesson::RunResult> results(runs.size());
  std::mutex print;
  lesson::EpochCallback progress;
  if (!s.quiet)
    progress = [&print](const lesson::EpochReport& r) {
      std::lock_guard lock(print);
      print_progress(r);
    };
  const int threads_per_run = s.threads.value_or(s.jobs > 1 ? 1 : get_num_threads());
  const std::vector<size_t> order = longest_first(runs);
  std::atomic<size_t> next{0};
  const int workers = std::min<int>(s.jobs, int(runs.size()));
  auto worker = [&] {
    set_num_threads(threads_per_run);  // OpenMP's count is per thread: set it on this one
    for (size_t k; (k = next++) < order.size();) {
      const size_t i = order[k];
      const lesson::TrainOptions& options = runs[i];
      lesson::RunResult& result = results[i];
      try {
        if (refused[i]) throw UsageError(*refused[i]);
        result = lesson::train_run(data, options, progress);
      } catch (const std::exception& e) {
        if (options.parallel) throw;  // the other ranks wait for this one: end them all (run_distributed)
        result = lesson::RunResult{.norm = options.norm, .seed = options.seed};
        const std::string what = e.what();
        result.failure =
            what.starts_with("run \"") ? what : cat(lesson::run_label(options.norm, options.seed), ": ", what);
        result.train_loss = result.val_loss = result.val_accuracy = std::numeric_limits<float>::quiet_NaN();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int j = 1; j < workers; ++j) helpers.emplace_back(worker);
  worker();
  for (std::thread& helper : helpers) helper.join();
  return results;
}

int run(Settings s) {
  if (s.summary_model) return print_model_summaries(s);
  check_files(s);
  const data::DigitsSplit data = data::load_digits(s.data_dir);
  const int64_t examples = data.X_train.size(0);
  if (!s.batch_order.empty()) s.train.batch_order = data::read_batch_order(s.batch_order, examples, s.train.epochs);
  const int64_t steps = check_against_data(s, examples);
  if (!s.stats.empty()) s.train.stats_every = s.stats_every > 0 ? s.stats_every : lesson::default_stats_every(steps);
  s.train.stop = &stop_requested();
  const std::vector<lesson::TrainOptions> runs = run_options(s, read_inits(s));

  // Runs that cannot train are refused now, before anything trains; if no run is left the
  // whole invocation is a usage error.
  std::vector<std::optional<std::string>> refused(runs.size());
  size_t trainable = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    refused[i] = lesson::refusal(runs[i], examples);
    trainable += !refused[i];
  }
  if (trainable == 0) throw UsageError(*refused.front());
  const int workers = std::min<int>(s.jobs, int(trainable));
  // Before the thread count is set: OpenBLAS maps a buffer per thread as it is set, and under
  // a limit too small for them it would hang there (address_limit.hpp).
  check_address_space(workers, s.threads.value_or(workers > 1 ? 1 : get_num_threads()));
  if (s.threads) set_num_threads(*s.threads);
  prepare_save_directory(s.save_dir);  // last: it creates the --save directory
  for (const std::optional<std::string>& why : refused)
    if (why && s.print) std::cerr << "digits: " << *why << std::endl;

  const std::vector<lesson::RunResult> results = train_all(s, runs, data, refused);
  // false when stdout cannot take the results (a closed pipe, a full device)
  const bool printed = !s.print || (std::cout << results_text(s, results) << std::flush);
  bool failed = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const lesson::RunResult& result = results[i];
    if (!result.ok()) {
      if (!refused[i] && !result.interrupted && s.print) std::cerr << "digits: " << *result.failure << std::endl;
      failed = true;
    } else if (!s.save_dir.empty()) {
      failed |= !write_reporting("digits", [&] {
        io::save_safetensors(s.checkpoint_path(lesson::short_name(result.norm), result.seed),
                             result.model->state_dict());
      });
    }
  }
  auto write = [&](const std::string& path, const std::string& bytes) {
    failed |= !write_reporting("digits", [&] { io::write_file_atomically(path, bytes); });
  };
  if (!s.curves.empty()) write(s.curves, lesson::curves_csv(results));
  if (!s.val_curves.empty()) write(s.val_curves, lesson::validation_csv(results));
  if (!s.summary.empty()) write(s.summary, summary_json(s, results, stop_signal()));
  if (!s.stats.empty()) write(s.stats, lesson::stats_csv(results));
  if (!s.tensorboard.empty() || !s.report.empty())
    failed |= !write_reporting("digits", [&] {
      write_comparisons(s, run_logs(s, results, examples), summary_json(s, results, 0),
                        "digits: " + lesson::arch_name(s.train.model.arch), results_text(s, results));
    });
  return exit_code("digits", failed, printed);
}

// --distributed: every rank runs the same runs, one after another (every rank must reach each
// collective in the same order); rank 0 alone prints and writes.
int run_distributed(Settings s) {
  const bool plain_batch_norm =
      !s.sync_bn && std::find(s.norms.begin(), s.norms.end(), NormKind::Batch) != s.norms.end();
  const BatchSplit split{s.train.batch_size, s.train.drop_last, plain_batch_norm,
                         [&] { return data::load_digits(s.data_dir).X_train.size(0); }, s.sync_bn};
  return apps::run_distributed("digits", split, [&](std::shared_ptr<DataParallel> parallel) {
    s.jobs = 1;
    if (!s.threads) s.threads = threads_per_rank();
    s.train.parallel = parallel;
    if (parallel->rank() != 0) s.keep_quiet();
    return run(s);
  });
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  return guarded_main(
      "digits",
      [&] {
        std::optional<Settings> settings = parse_settings(argc, argv);
        if (settings && settings->distributed) return run_distributed(std::move(*settings));
        return settings ? run(std::move(*settings)) : 0;
      },
      out_of_memory_message);
}
