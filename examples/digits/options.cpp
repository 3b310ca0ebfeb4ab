#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <thread>

#include "lesson/seeds.hpp"
#include "minidl/tensor/error.hpp"
#include "model_options.hpp"
#include "trainer_options.hpp"

namespace fs = std::filesystem;

namespace minidl::digits {

namespace {

// Every value is read as text and parsed here, so each message names its option (cxxopts'
// own numbers would take "0x10" as 16 and report "Argument '' failed to parse" unnamed).
cxxopts::Options command_line() {
  cxxopts::Options options("digits",
                           "Trains the lesson's deep tanh network on the handwritten digits, once per norm "
                           "and seed.");
  options.set_width(100);
  auto text = [] { return cxxopts::value<std::string>(); };
  options.add_options()("norm", "comma list of none, batch, layer, rms, group (instance: --arch cnn only)",
                        text()->default_value("none,batch,layer"), "LIST")(
      "seeds", "train every norm once per seed (each seeds its initial weights and shuffling): 0-4, 0,3,7",
      text()->default_value("0-4"), "LIST")("epochs", "passes over the training split", text()->default_value("5"),
                                            "N")("lr", "SGD learning rate", text()->default_value("0.05"), "LR")(
      "batch-size", "examples per batch (more than the split: one batch of it all)", text()->default_value("64"), "N")(
      "drop-last", "drop the short last batch of each epoch (default: keep it, as the lesson does)")(
      "depth", "Linear + norm + Tanh blocks", text()->default_value("8"), "N")("width", "features per hidden layer",
                                                                               text()->default_value("64"), "N")(
      "groups", "GroupNorm's groups (must divide --width; the CNN: 16)", text()->default_value("8"), "G")(
      "threads", "threads for OpenMP and OpenBLAS in each run (default: 1 when runs train at once, else theirs)",
      text(), "N")("jobs",
                   "train up to N runs at once, each on its own thread, with the results of one by one (default: "
                   "the machine's cores, or 1 with --threads)",
                   text(), "N")("data", "directory with digits.csv and the split files (default: the project's data/)",
                                text(), "DIR")(
      "curves", "write every step's loss to FILE (CSV: run,seed,epoch,step,loss)", text(), "FILE")(
      "val-curves",
      "write each epoch's validation loss and accuracy to FILE (CSV: run,seed,epoch,step,val_loss,"
      "val_accuracy)",
      text(), "FILE")("summary", "write each run's figures to FILE (JSON)", text(), "FILE")(
      "save", "write each trained model to DIR/<run>.safetensors (several seeds: DIR/<run>_seed<S>.safetensors)",
      text(), "DIR")("init-from", "start each run (every seed) from DIR/<run>.safetensors instead of a random init",
                     text(), "DIR")(
      "batch-order", "FILE with one permutation of the training split per epoch: replays a run made elsewhere", text(),
      "FILE")("stats",
              "record each layer's statistics (tanh outputs, their gradients, weight gradients and updates) "
              "and write them to FILE (CSV: run,seed,step,layer,quantity,statistic,value)",
              text(), "FILE")("stats-every",
                              "with --stats: record every N-th step and each epoch's last (default: about 30 "
                              "snapshots a run)",
                              text(), "N")("quiet", "no progress lines")(
      "distributed",
      "train data-parallel on the processes mpirun started (mpirun -np N digits --distributed): each rank takes "
      "batch-size / N of every batch; rank 0 prints and writes the files")(
      "sync-bn", "with --distributed: BatchNorm layers as SyncBatchNorm (statistics over the whole global batch)")(
      "help", "show this help");
  add_model_options(options);
  add_trainer_options(options);
  return options;
}

// The project's data: the source tree the program was built from, else beside the executable.
std::string default_data_dir() {
  std::vector<fs::path> candidates{MINIDL_DATA_DIR};
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error)
    for (const char* relative : {"../data", "../../data", "../../../data", "../share/minidl/data"})
      candidates.push_back(exe.parent_path() / relative);
  std::string looked;
  for (const fs::path& dir : candidates) {
    if (fs::exists(dir / "digits.csv")) return dir.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + dir.lexically_normal().string();
  }
  throw UsageError(cat("cannot find the digits data (looked in ", looked, "): pass --data DIR"));
}

// A repeated option would silently keep one of its values: say which came twice.
void refuse_repeats(const cxxopts::ParseResult& args) {
  std::map<std::string, int> seen;
  for (const cxxopts::KeyValue& kv : args.arguments())
    if (++seen[kv.key()] == 2) throw UsageError(cat("--", kv.key(), " is given more than once: give it once"));
}

}  // namespace

int64_t parse_whole(const std::string& option, const std::string& text, int64_t low, int64_t high) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool decimal = !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
  if (!decimal || stop != end || (error != std::errc() && error != std::errc::result_out_of_range))
    throw UsageError(
        cat(option, ": \"", text, "\" is not a whole number (expected a decimal integer, at least ", low, ")"));
  if ((error == std::errc::result_out_of_range && text.front() == '-') || (error == std::errc() && value < low))
    throw UsageError(cat(option, " must be at least ", low, ", got ", text));
  if (error == std::errc::result_out_of_range || value > high)
    throw UsageError(cat(option, " must be at most ", high, ", got ", text));
  return value;
}

double parse_real(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || error != std::errc() || stop != end)
    throw UsageError(cat(option, ": \"", text, "\" is not a number"));
  return value;
}

std::vector<lesson::NormKind> parse_norms(const std::string& list) {
  if (list.empty()) throw UsageError("--norm is empty: choose from none, batch, layer, rms, group");
  std::vector<lesson::NormKind> norms;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    if (name.empty())
      throw UsageError(cat("--norm \"", list, "\" has an empty item: choose from none, batch, layer, rms, group"));
    const lesson::NormKind norm = lesson::parse_norm(name);
    if (std::find(norms.begin(), norms.end(), norm) != norms.end())
      throw UsageError(cat("--norm lists \"", name, "\" twice"));
    norms.push_back(norm);
    start = comma + 1;
  }
  return norms;
}

std::optional<Settings> parse_settings(int argc, char** argv) {
  cxxopts::Options options = command_line();
  cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return std::nullopt;
  }
  if (!args.unmatched().empty()) throw UsageError(cat("unexpected argument \"", args.unmatched()[0], "\""));
  refuse_repeats(args);
  // The value given or the option's default; "" for an option without default not given.
  auto text = [&](const char* name) {
    return args.count(name) || args[name].has_default() ? args[name].as<std::string>() : std::string();
  };
  auto whole = [&](const char* name, int64_t low) {
    return parse_whole(cat("--", name), text(name), low, std::numeric_limits<int64_t>::max());
  };
  Settings s;
  s.norms = parse_norms(text("norm"));
  s.seeds = lesson::parse_seeds(text("seeds"));
  s.train.epochs = whole("epochs", 1);
  s.train.lr = parse_real("--lr", text("lr"));
  s.train.batch_size = whole("batch-size", 1);
  s.train.drop_last = args.count("drop-last") > 0;
  s.train.trainer = parse_trainer_options(args);
  s.train.net.depth = whole("depth", 1);
  s.train.net.width = whole("width", 1);
  s.train.net.groups = whole("groups", 1);
  if (args.count("threads")) s.threads = int(parse_whole("--threads", text("threads"), 1, kMaxThreads));
  if (args.count("jobs")) {
    s.jobs = int(parse_whole("--jobs", text("jobs"), 1, kMaxThreads));
  } else {  // small runs use the cores best side by side; --threads alone asks for one at a time
    s.jobs = s.threads ? 1 : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  s.data_dir = args.count("data") ? text("data") : default_data_dir();
  s.curves = text("curves");
  s.validation = text("val-curves");
  s.summary = text("summary");
  s.save_dir = text("save");
  s.init_from_dir = text("init-from");
  s.batch_order = text("batch-order");
  s.stats = text("stats");
  if (args.count("stats-every")) {
    if (s.stats.empty()) throw UsageError("--stats-every needs --stats FILE: it says how often --stats records");
    s.stats_every = whole("stats-every", 1);
  }
  s.quiet = args.count("quiet") > 0;
  read_model_options(args, s);
  s.distributed = args.count("distributed") > 0;
  s.sync_bn = args.count("sync-bn") > 0;
  if (s.sync_bn && !s.distributed)
    throw UsageError("--sync-bn synchronizes BatchNorm across processes: it needs --distributed");
  return s;
}

}  // namespace minidl::digits
