#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>

#include "runs/run_stats.hpp"
#include "runs/seeds.hpp"

namespace fs = std::filesystem;

namespace minidl::charlm {

namespace {

constexpr int64_t kLargest = std::numeric_limits<int64_t>::max();

cxxopts::Options command_line() {
  cxxopts::Options o("charlm",
                     "Trains a character-level transformer (makemore's) on a word list, once per norm, position and "
                     "seed, then writes new words.");
  o.set_width(100);
  using cxxopts::value;
  o.add_options()("norm", "comma list of layer, rms, batch, batch-masked, none, dyt",
                  value<std::string>()->default_value("layer"),
                  "LIST")("norm-position", "comma list of pre (x + f(norm(x))) and post (norm(x + f(x)))",
                          value<std::string>()->default_value("pre"), "LIST")(
      "seeds", "train every norm and position once per seed: 0-4, 0,3,7", value<std::string>()->default_value("0-2"),
      "LIST")("steps", "optimizer steps per run", value<std::string>()->default_value("1000"), "N")(
      "batch-size", "words per batch", value<std::string>()->default_value("32"), "N")(
      "lr", "AdamW's learning rate (betas 0.9,0.99, weight decay 0.01)", value<std::string>()->default_value("5e-4"),
      "LR")("warmup", "raise the lr linearly from 0.01 lr over the first STEPS steps",
            value<std::string>()->default_value("0"),
            "STEPS")("schedule", "constant or cosine (down to 0 at the last step, after the warmup)",
                     value<std::string>()->default_value("constant"), "NAME")(
      "eval-every", "validation loss every N steps (and at the end)", value<std::string>()->default_value("200"), "N")(
      "threads", "threads for OpenMP and OpenBLAS", value<std::string>(), "N")(
      "data", "word list, one a-z word per line (default: the project's data/words.txt)", value<std::string>(), "FILE")(
      "curves", "write every step's training loss to FILE (CSV: run,seed,step,loss)", value<std::string>(), "FILE")(
      "val-curves", "write each evaluation's validation loss to FILE (CSV: run,seed,step,val_loss)",
      value<std::string>(), "FILE")("summary", "write each run's figures to FILE (JSON)", value<std::string>(), "FILE")(
      "save", "write each trained model to DIR/<run>.safetensors (several seeds: DIR/<run>_seed<S>.safetensors)",
      value<std::string>(),
      "DIR")("init-from", "start each run from DIR/<run>.safetensors", value<std::string>(), "DIR")(
      "batch-order", "FILE with one permutation of the training split per epoch: replays a run made elsewhere",
      value<std::string>(), "FILE")("sample", "write N words with each run's model", value<std::string>(), "N")(
      "temperature", "divide the logits by T before sampling", value<std::string>()->default_value("1.0"), "T")(
      "top-k", "sample among the K likeliest tokens only (0: all)", value<std::string>()->default_value("0"), "K")(
      "sample-seed", "seed of the sampling stream", value<std::string>()->default_value("0"), "S")(
      "stats",
      "record each module's output and the gradient reaching it, each parameter's gradient and update, and write "
      "them to FILE (CSV: run,seed,step,layer,quantity,statistic,value; scripts/plot_stats.sh draws it)",
      value<std::string>(),
      "FILE")("stats-every", "with --stats: record the first step, every N-th and the last (default: about 30 a run)",
              value<std::string>(), "N")(
      "attention",
      "after training, write every layer's and head's attention weights for WORD (run as .WORD) to FILE (CSV: "
      "run,seed,layer,head,query,key,query_token,key_token,weight; scripts/plot_attention.sh draws it)",
      value<std::string>(), "WORD,FILE")("quiet", "no progress lines")("help", "show this help");
  o.add_options("Model")("layers", "transformer blocks", value<std::string>()->default_value("4"), "N")(
      "heads", "attention heads (must divide --width)", value<std::string>()->default_value("4"), "N")(
      "width", "channels, C", value<std::string>()->default_value("64"), "N")(
      "block-size", "positions: words of up to N - 1 letters", value<std::string>()->default_value("32"), "N")(
      "init", "makemore (PyTorch's defaults) or xavier (xavier_uniform_ on the blocks' Linear weights, biases 0)",
      value<std::string>()->default_value("makemore"), "NAME");
  o.add_options("Data parallel")("distributed",
                                 "train data-parallel on the processes mpirun started (mpirun -np N charlm "
                                 "--distributed): each rank takes batch-size / N words of every batch; rank 0 prints "
                                 "and writes the files")(
      "sync-bn",
      "with --distributed: batch and batch-masked as SyncBatchNorm (statistics over the whole global batch)");
  o.add_options("Comparing runs")("tensorboard", "write TensorBoard event files, one per run, to DIR/<run>/seed<S>/",
                                  value<std::string>(), "DIR")(
      "report", "write a page comparing the runs' curves to FILE.html (opens offline)", value<std::string>(), "FILE");
  return o;
}

// The option's value as an integer in [low, high]; decimal digits only ("1e3", "0x10" refused).
int64_t integer(const cxxopts::ParseResult& args, const std::string& name, int64_t low, int64_t high = kLargest) {
  const std::string text = args[name].as<std::string>();
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool digits_only = !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
  if (!digits_only || end != text.data() + text.size() || error == std::errc::invalid_argument)
    throw UsageError(cat("--", name, ": \"", text, "\" is not a whole number"));
  if (error == std::errc::result_out_of_range || value < low || value > high)
    throw UsageError(cat("--", name, " must be in ", low, "..", high, ", got ", text));
  return value;
}

// The option's value as a finite number above 0.
double positive(const cxxopts::ParseResult& args, const std::string& name) {
  const std::string text = args[name].as<std::string>();
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0.0)
    throw UsageError(cat("--", name, " must be a positive number, got \"", text, "\""));
  return value;
}

// "layer,rms" -> each item through parse_item, in order; an empty item or one twice refused.
template <typename Parse>
auto comma_list(const std::string& option, const std::string& list, Parse parse_item) {
  std::vector<decltype(parse_item(std::string()))> items;
  std::set<std::string> seen;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    if (!seen.insert(item).second) throw UsageError(cat(option, " lists \"", item, "\" twice"));
    items.push_back(parse_item(item));
    start = end + 1;
  }
  return items;
}

std::string default_data_file() {
  const fs::path built_from = fs::path(MINIDL_DATA_DIR) / "words.txt";
  std::error_code error;
  if (fs::exists(built_from, error)) return built_from.string();
  throw UsageError(cat("cannot find the word list ", built_from.string(), ": pass --data FILE"));
}

void read_model(const cxxopts::ParseResult& args, ModelOptions& m) {
  m.layers = integer(args, "layers", 1, 1000);
  m.width = integer(args, "width", 1, 1 << 16);
  m.heads = integer(args, "heads", 1, m.width);
  if (m.width % m.heads != 0)
    throw UsageError(cat("--heads ", m.heads, " does not divide --width ", m.width,
                         ": each head takes width / heads "
                         "channels"));
  m.block_size = integer(args, "block-size", 2, 1 << 16);
  m.init = parse_init(args["init"].as<std::string>());
}

void read_training(const cxxopts::ParseResult& args, RunOptions& r) {
  r.steps = integer(args, "steps", 0);
  r.batch_size = integer(args, "batch-size", 1);
  r.lr = positive(args, "lr");
  r.trainer.warmup = integer(args, "warmup", 0);
  const std::string schedule = args["schedule"].as<std::string>();
  if (schedule != "constant" && schedule != "cosine")
    throw UsageError(cat("--schedule: unknown schedule \"", schedule, "\": choose constant or cosine"));
  r.trainer.schedule = schedule == "cosine" ? lesson::ScheduleKind::Cosine : lesson::ScheduleKind::Constant;
  r.eval_every = integer(args, "eval-every", 1);
}

void read_sampling(const cxxopts::ParseResult& args, Settings& s) {
  if (args.count("sample")) s.samples = integer(args, "sample", 0, 1000000);
  s.sample.temperature = positive(args, "temperature");
  s.sample.top_k = integer(args, "top-k", 0, kVocabSize);
  s.sample_seed = uint64_t(integer(args, "sample-seed", 0));
}

std::string text_or_empty(const cxxopts::ParseResult& args, const char* name) {
  return args.count(name) ? args[name].as<std::string>() : std::string();
}

// --stats, --stats-every and --attention, after the model's and training's options.
void read_diagnostics(const cxxopts::ParseResult& args, Settings& s) {
  s.stats = text_or_empty(args, "stats");
  if (args.count("stats-every") && s.stats.empty())
    throw UsageError("--stats-every needs --stats FILE: it says how often --stats records");
  if (!s.stats.empty())
    s.run.stats_every =
        args.count("stats-every") ? integer(args, "stats-every", 1) : lesson::default_stats_every(s.run.steps);
  if (args.count("attention"))
    s.attention = parse_attention(args["attention"].as<std::string>(), s.run.model.block_size);
}

}  // namespace

std::optional<Settings> parse_settings(int argc, char** argv) {
  cxxopts::Options options = command_line();
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return std::nullopt;
  }
  if (!args.unmatched().empty()) throw UsageError(cat("unexpected argument \"", args.unmatched()[0], "\""));
  for (const cxxopts::KeyValue& kv : args.arguments())
    if (args.count(kv.key()) > 1) throw UsageError(cat("--", kv.key(), " is given more than once: give it once"));
  Settings s;
  s.norms = comma_list("--norm", args["norm"].as<std::string>(), parse_norm);
  s.positions = comma_list("--norm-position", args["norm-position"].as<std::string>(), parse_position);
  s.seeds = lesson::parse_seeds(args["seeds"].as<std::string>());
  read_model(args, s.run.model);
  read_training(args, s.run);
  read_sampling(args, s);
  if (args.count("threads")) s.threads = int(integer(args, "threads", 1, 1024));
  s.quiet = args.count("quiet") > 0;
  s.data_file = args.count("data") ? args["data"].as<std::string>() : default_data_file();
  s.curves = text_or_empty(args, "curves");
  s.val_curves = text_or_empty(args, "val-curves");
  s.summary = text_or_empty(args, "summary");
  s.tensorboard = text_or_empty(args, "tensorboard");
  s.report = text_or_empty(args, "report");
  s.save_dir = text_or_empty(args, "save");
  s.init_from_dir = text_or_empty(args, "init-from");
  s.batch_order = text_or_empty(args, "batch-order");
  read_diagnostics(args, s);
  s.distributed = args.count("distributed") > 0;
  s.sync_bn = args.count("sync-bn") > 0;
  if (s.sync_bn && !s.distributed)
    throw UsageError("--sync-bn synchronizes BatchNorm across processes: it needs --distributed");
  return s;
}

void check_against_data(const Settings& s, int64_t train_words) {
  if (s.run.batch_size > train_words)
    throw UsageError(cat("--batch-size ", s.run.batch_size, " is more than the ", train_words,
                         " training words: every batch is a whole one"));
  if (s.run.trainer.warmup > 0 && s.run.trainer.warmup >= s.run.steps)
    throw UsageError(cat("--warmup ", s.run.trainer.warmup, " must be shorter than the run's ", s.run.steps, " steps"));
}

}  // namespace minidl::charlm
