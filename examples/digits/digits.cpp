// digits: the lesson's experiment from the command line. For each requested norm and seed it
// seeds, builds the deep tanh network, trains it with SGD on the handwritten digits, and
// prints per norm the mean and range over seeds of the final figures (one seed: the lesson's
//   <name> training loss X.XXX   val accuracy Y.YYY).
// Exit codes: 0 all runs trained, 1 a run diverged, was refused or failed (the others still
// train and every output is written), 2 bad options or input files (nothing trained).
#include <unistd.h>

#include <charconv>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>
#include <limits>
#include <sstream>

#include "data/batch_order.hpp"
#include "data/digits.hpp"
#include "lesson/seeds.hpp"
#include "lesson/train_run.hpp"
#include "minidl/minidl.hpp"

namespace fs = std::filesystem;
using namespace minidl;
using lesson::NormKind;

namespace {

struct Settings {
  std::vector<NormKind> norms;
  std::vector<uint64_t> seeds;
  lesson::TrainOptions train;  // norm, init and batch_order are filled per run / after loading
  std::optional<int> threads;
  int jobs = 1;
  std::string data_dir, curves, validation, summary, save_dir, init_dir, batch_order;
  bool quiet = false;
};

cxxopts::Options command_line() {
  cxxopts::Options options("digits", "Trains the lesson's deep tanh network on the handwritten digits, once per norm.");
  options.set_width(100);
  options.add_options()
    ("norm", "comma list of none, batch, layer, rms, group", cxxopts::value<std::string>()->default_value("none,batch,layer"), "LIST")
    ("epochs", "passes over the training split", cxxopts::value<int64_t>()->default_value("5"), "N")
    ("lr", "SGD learning rate", cxxopts::value<std::string>()->default_value("0.05"), "LR")
    ("batch-size", "examples per batch", cxxopts::value<int64_t>()->default_value("64"), "N")
    ("drop-last", "drop the short last batch of each epoch (default: keep it, as the lesson does)")
    ("depth", "Linear + norm + Tanh blocks", cxxopts::value<int64_t>()->default_value("8"), "N")
    ("width", "features per hidden layer", cxxopts::value<int64_t>()->default_value("64"), "N")
    ("groups", "GroupNorm's groups (must divide --width)", cxxopts::value<int64_t>()->default_value("8"), "G")
    ("seeds", "train every norm once per seed (each seeds its initial weights and shuffling): 0-4, 0,3,7",
     cxxopts::value<std::string>()->default_value("0-4"), "LIST")
    ("threads", "threads for OpenMP and OpenBLAS in each run (default: 1 when runs train at once, else theirs)",
     cxxopts::value<int>(), "N")
    ("jobs", "train up to N runs at once, each on its own thread, with the results of one by one (default: "
     "the machine's cores, or 1 with --threads)", cxxopts::value<int>(), "N")
    ("data", "directory with digits.csv and the split files (default: the project's data/)", cxxopts::value<std::string>(), "DIR")
    ("curves", "write every step's loss to FILE (CSV: run,seed,epoch,step,loss)", cxxopts::value<std::string>(), "FILE")
    ("val-curves", "write each epoch's validation loss and accuracy to FILE (CSV: run,seed,epoch,step,val_loss,"
     "val_accuracy)", cxxopts::value<std::string>(), "FILE")
    ("summary", "write each run's figures to FILE (JSON)", cxxopts::value<std::string>(), "FILE")
    ("save", "write each trained model to DIR/<run>.safetensors (several seeds: DIR/<run>_seed<S>.safetensors)",
     cxxopts::value<std::string>(), "DIR")
    ("init", "start each run (every seed) from DIR/<run>.safetensors instead of a random init",
     cxxopts::value<std::string>(), "DIR")
    ("batch-order", "FILE with one permutation of the training split per epoch: replays a run made elsewhere",
     cxxopts::value<std::string>(), "FILE")
    ("quiet", "no progress lines")
    ("help", "show this help");
  return options;
}

std::vector<NormKind> parse_norms(const std::string& list) {
  std::vector<NormKind> norms;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    NormKind norm = lesson::parse_norm(name);
    if (std::find(norms.begin(), norms.end(), norm) != norms.end())
      throw UsageError(cat("--norm lists \"", name, "\" twice"));
    norms.push_back(norm);
  }
  if (norms.empty()) throw UsageError("--norm is empty: choose from none, batch, layer, rms, group");
  return norms;
}

// The project's data: the source tree the program was built from, else beside the executable.
std::string default_data_dir() {
  std::vector<fs::path> candidates{MINIDL_DATA_DIR};
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error)
    for (const char* relative : {"../data", "../../data", "../share/minidl/data"})
      candidates.push_back(exe.parent_path() / relative);
  std::string looked;
  for (const fs::path& dir : candidates) {
    if (fs::exists(dir / "digits.csv")) return dir.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + dir.lexically_normal().string();
  }
  throw UsageError(cat("cannot find the digits data (looked in ", looked, "): pass --data DIR"));
}

void check_writable_parent(const std::string& option, const std::string& file) {
  fs::path parent = fs::path(file).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw UsageError(cat(option, " ", file, ": the directory ", parent.string(), " does not exist"));
}

// The whole text as a number (cxxopts' own parse of a double would take "5x" as 5).
double parse_real(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end)
    throw UsageError(cat(option, ": \"", text, "\" is not a number"));
  return value;
}

std::optional<Settings> parse_settings(int argc, char** argv) {
  cxxopts::Options options = command_line();
  cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return std::nullopt;
  }
  if (!args.unmatched().empty()) throw UsageError(cat("unexpected argument \"", args.unmatched()[0], "\""));
  Settings s;
  s.norms = parse_norms(args["norm"].as<std::string>());
  s.train.epochs = args["epochs"].as<int64_t>();
  s.train.lr = parse_real("--lr", args["lr"].as<std::string>());
  s.train.batch_size = args["batch-size"].as<int64_t>();
  s.train.net.depth = args["depth"].as<int64_t>();
  s.train.net.width = args["width"].as<int64_t>();
  s.train.net.groups = args["groups"].as<int64_t>();
  s.seeds = lesson::parse_seeds(args["seeds"].as<std::string>());
  s.train.drop_last = args.count("drop-last") > 0;
  if (args.count("threads")) {
    s.threads = args["threads"].as<int>();
    if (*s.threads < 1) throw UsageError(cat("--threads must be at least 1, got ", *s.threads));
  }
  if (args.count("jobs")) {
    s.jobs = args["jobs"].as<int>();
    if (s.jobs < 1) throw UsageError(cat("--jobs must be at least 1, got ", s.jobs));
  } else {  // small runs use the cores best side by side; --threads alone asks for one at a time
    s.jobs = s.threads ? 1 : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  auto text = [&](const char* name) { return args.count(name) ? args[name].as<std::string>() : std::string(); };
  s.data_dir = args.count("data") ? text("data") : default_data_dir();
  s.curves = text("curves");
  s.validation = text("val-curves");
  s.summary = text("summary");
  s.save_dir = text("save");
  s.init_dir = text("init");
  s.batch_order = text("batch-order");
  s.quiet = args.count("quiet") > 0;
  if (!s.curves.empty()) check_writable_parent("--curves", s.curves);
  if (!s.validation.empty()) check_writable_parent("--val-curves", s.validation);
  if (!s.summary.empty()) check_writable_parent("--summary", s.summary);
  return s;
}

// Reads DIR/<run>.safetensors for every run and checks it fits, before any training.
std::vector<std::optional<nn::StateDict>> read_inits(const Settings& s) {
  std::vector<std::optional<nn::StateDict>> inits(s.norms.size());
  if (s.init_dir.empty()) return inits;
  for (size_t i = 0; i < s.norms.size(); ++i) {
    const std::string path = (fs::path(s.init_dir) / (lesson::short_name(s.norms[i]) + ".safetensors")).string();
    inits[i] = io::load_safetensors(path);
    auto model = lesson::deep_net(s.norms[i], s.train.net);
    try {
      model->load_state_dict(*inits[i], /*strict=*/true);
    } catch (const Error& e) {
      throw UsageError(cat(path, " does not fit deep_net(", lesson::short_name(s.norms[i]), "): ", e.what()));
    }
  }
  return inits;
}

// One whole line per call, so lines of runs training at once never interleave mid-line.
void print_progress(const lesson::EpochReport& r) {
  char line[200];
  std::snprintf(line, sizeof line, "[%s seed %llu] epoch %lld/%lld  mean loss %.4f  val accuracy %.3f  %.2f s\n",
                lesson::short_name(r.norm).c_str(), static_cast<unsigned long long>(r.seed),
                static_cast<long long>(r.epoch), static_cast<long long>(r.epochs), r.mean_loss, double(r.val_accuracy),
                r.seconds);
  std::cerr << line << std::flush;
}

nlohmann::ordered_json spread_json(const lesson::Spread& s) {
  if (s.count == 0) return nullptr;
  return {{"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
}

std::string summary_json(const Settings& s, const std::vector<lesson::RunResult>& results) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const lesson::RunResult& r : results)  // NaN figures of a run that did not finish come out as null
    runs.push_back({{"norm", lesson::short_name(r.norm)},
                    {"name", lesson::display_name(r.norm)},
                    {"seed", r.seed},
                    {"train_loss", r.train_loss},
                    {"val_loss", r.val_loss},
                    {"val_accuracy", r.val_accuracy},
                    {"seconds", r.seconds},
                    {"steps", r.curve.size()},
                    {"error", r.failure ? nlohmann::ordered_json(*r.failure) : nlohmann::ordered_json()}});
  nlohmann::ordered_json norms = nlohmann::ordered_json::array();
  for (const lesson::NormSpread& row : lesson::spreads_by_norm(results, s.norms, s.seeds))
    norms.push_back({{"norm", lesson::short_name(row.norm)},
                     {"name", lesson::display_name(row.norm)},
                     {"runs", row.runs},
                     {"finished", row.train_loss.count},
                     {"train_loss", spread_json(row.train_loss)},
                     {"val_loss", spread_json(row.val_loss)},
                     {"val_accuracy", spread_json(row.val_accuracy)}});
  const lesson::TrainOptions& t = s.train;
  nlohmann::ordered_json settings = {{"epochs", t.epochs},         {"lr", t.lr},          {"batch_size", t.batch_size},
                                     {"drop_last", t.drop_last},   {"depth", t.net.depth}, {"width", t.net.width},
                                     {"groups", t.net.groups},     {"seeds", s.seeds},    {"init", s.init_dir},
                                     {"batch_order", s.batch_order}};
  return nlohmann::ordered_json{{"settings", settings}, {"norms", norms}, {"runs", runs}}.dump(2) + "\n";
}

// cxxopts names the value it could not parse ("Argument 'x' failed to parse") but not the
// option: "--lr: " for the option given that value, or "" when none is found.
std::string option_given(int argc, char** argv, const std::string& message) {
  auto named = [&](const std::string& value) {
    return !value.empty() && (message.find("\u2018" + value + "\u2019") != std::string::npos ||
                              message.find("'" + value + "'") != std::string::npos);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.starts_with("--")) continue;
    const size_t equals = arg.find('=');
    if (equals != std::string::npos && named(arg.substr(equals + 1))) return arg.substr(0, equals) + ": ";
    if (equals == std::string::npos && i + 1 < argc && named(argv[i + 1])) return arg + ": ";
  }
  return "";
}

// One training run: a norm and a seed.
struct RunSpec {
  NormKind norm;
  uint64_t seed;
  size_t init;  // index into the norms' initial weights
};

// Every norm once per seed, grouped by norm in the order asked for, seeds in their order.
std::vector<RunSpec> run_specs(const Settings& s) {
  std::vector<RunSpec> specs;
  for (size_t n = 0; n < s.norms.size(); ++n)
    for (uint64_t seed : s.seeds) specs.push_back({s.norms[n], seed, n});
  return specs;
}

// The runs' indices, those with a norm layer (the longer ones) first: on 2 cores the
// lesson's none, batch, layer then end when the longest does, not one run after it.
std::vector<size_t> longest_first(const std::vector<RunSpec>& specs) {
  std::vector<size_t> order(specs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return specs[i].norm != NormKind::None; });
  return order;
}

// Trains every run that was not refused, up to s.jobs at once, each on its own thread. A run
// owns its generators (init and shuffling), so the results equal those of running them one
// by one. A run that throws is reported in its result; the others go on.
std::vector<lesson::RunResult> train_all(const Settings& s, const std::vector<RunSpec>& specs,
                                         const data::DigitsSplit& data,
                                         const std::vector<std::optional<nn::StateDict>>& inits,
                                         const std::vector<std::optional<std::string>>& refused) {
  std::vector<lesson::RunResult> results(specs.size());
  std::mutex print;
  lesson::EpochCallback progress;
  if (!s.quiet)
    progress = [&print](const lesson::EpochReport& r) {
      std::lock_guard lock(print);
      print_progress(r);
    };
  const int threads_per_run = s.threads.value_or(s.jobs > 1 ? 1 : get_num_threads());
  const std::vector<size_t> order = longest_first(specs);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    set_num_threads(threads_per_run);  // OpenMP's count is per thread: set it on this one
    for (size_t k; (k = next++) < order.size();) {
      const size_t i = order[k];
      lesson::TrainOptions options = s.train;
      options.norm = specs[i].norm;
      options.seed = specs[i].seed;
      options.init = inits[specs[i].init];
      lesson::RunResult& result = results[i];
      try {
        if (refused[i]) throw UsageError(*refused[i]);
        result = lesson::train_run(data, options, progress);
      } catch (const std::exception& e) {
        result = lesson::RunResult{};
        result.norm = options.norm;
        result.seed = options.seed;
        const std::string what = e.what();
        result.failure = what.starts_with("run \"") ? what : cat(lesson::run_label(options.norm, options.seed), ": ", what);
        result.train_loss = result.val_loss = result.val_accuracy = std::numeric_limits<float>::quiet_NaN();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int j = 1; j < std::min<int>(s.jobs, int(specs.size())); ++j) helpers.emplace_back(worker);
  worker();
  for (std::thread& helper : helpers) helper.join();
  return results;
}

std::string checkpoint_path(const Settings& s, const lesson::RunResult& result) {
  const std::string name = lesson::short_name(result.norm);
  const std::string file = s.seeds.size() == 1 ? name : cat(name, "_seed", result.seed);
  return (fs::path(s.save_dir) / (file + ".safetensors")).string();
}

void print_results(const Settings& s, const std::vector<lesson::RunResult>& results) {
  if (s.seeds.size() == 1) {
    for (const lesson::RunResult& result : results) std::cout << lesson::summary_line(result) << "\n";
  } else {
    std::cout << lesson::seed_table(results, s.norms, s.seeds);
  }
  std::cout << std::flush;
}

int run(Settings s) {
  if (s.threads) set_num_threads(*s.threads);
  for (NormKind norm : s.norms) {
    s.train.norm = norm;
    lesson::check_deep_net_options(norm, s.train.net);
  }
  s.train.norm = NormKind::None;
  const data::DigitsSplit data = data::load_digits(s.data_dir);
  if (!s.batch_order.empty()) s.train.batch_order = data::read_batch_order(s.batch_order, data.X_train.size(0), s.train.epochs);
  lesson::check_train_options(s.train, data.X_train.size(0));
  std::vector<std::optional<nn::StateDict>> inits = read_inits(s);

  // Runs that cannot train are refused now, before anything trains; if no run is left the
  // whole invocation is a usage error.
  const std::vector<RunSpec> specs = run_specs(s);
  std::vector<std::optional<std::string>> refused(specs.size());
  size_t trainable = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    lesson::TrainOptions options = s.train;
    options.norm = specs[i].norm;
    options.seed = specs[i].seed;
    refused[i] = lesson::refusal(options, data.X_train.size(0));
    trainable += !refused[i];
  }
  if (trainable == 0) throw UsageError(*refused.front());
  for (const std::optional<std::string>& why : refused)
    if (why) std::cerr << "digits: " << *why << std::endl;
  if (!s.save_dir.empty()) fs::create_directories(s.save_dir);

  const std::vector<lesson::RunResult> results = train_all(s, specs, data, inits, refused);
  print_results(s, results);
  bool failed = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const lesson::RunResult& result = results[i];
    if (!result.ok()) {
      if (!refused[i]) std::cerr << "digits: " << *result.failure << std::endl;
      failed = true;
    } else if (!s.save_dir.empty()) {
      io::save_safetensors(checkpoint_path(s, result), result.model->state_dict());
    }
  }
  if (!s.curves.empty()) io::write_file_atomically(s.curves, lesson::curves_csv(results));
  if (!s.validation.empty()) io::write_file_atomically(s.validation, lesson::validation_csv(results));
  if (!s.summary.empty()) io::write_file_atomically(s.summary, summary_json(s, results));
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::optional<Settings> settings = parse_settings(argc, argv);
    return settings ? run(std::move(*settings)) : 0;
  } catch (const UsageError& e) {
    std::cerr << "digits: " << e.what() << std::endl;
    return 2;
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    std::cerr << "digits: " << option_given(argc, argv, e.what()) << e.what() << " (see digits --help)" << std::endl;
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "digits: " << e.what() << " (see digits --help)" << std::endl;
    return 2;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "digits: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "digits: error: " << e.what() << std::endl;
    return 1;
  }
}
