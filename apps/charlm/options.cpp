#include "options.hpp"

#include <cxxopts.hpp>
#include <filesystem>

#include "runs/run_stats.hpp"
#include "runs/seeds.hpp"

namespace fs = std::filesystem;

namespace minidl::charlm {

namespace {

// In --help's order.
const apps::OptionSpec kOptions[] = {
    {"", "norm", "comma list of layer, rms, batch, batch-masked, none, dyt", "layer", "LIST"},
    {"", "norm-position", "comma list of pre (x + f(norm(x))) and post (norm(x + f(x)))", "pre", "LIST"},
    {"", "seeds", "train every norm and position once per seed: 0-4, 0,3,7", "0-2", "LIST"},
    {"", "steps", "optimizer steps per run", "1000", "N"},
    {"", "batch-size", "words per batch", "32", "N"},
    {"", "lr", "AdamW's learning rate (betas 0.9,0.99, weight decay 0.01)", "5e-4", "LR"},
    {"", "warmup", "raise the lr linearly from 0.01 lr over the first STEPS steps", "0", "STEPS"},
    {"", "schedule", "constant or cosine (down to 0 at the last step, after the warmup)", "constant", "NAME"},
    {"", "eval-every", "validation loss every N steps (and at the end)", "200", "N"},
    {"", "threads", "threads for OpenMP and OpenBLAS", nullptr, "N"},
    {"", "data", "word list, one a-z word per line (default: the project's data/words.txt)", nullptr, "FILE"},
    {"", "curves", "write every step's training loss to FILE (CSV: run,seed,step,loss)", nullptr, "FILE"},
    {"", "val-curves", "write each evaluation's validation loss to FILE (CSV: run,seed,step,val_loss)", nullptr,
     "FILE"},
    {"", "summary", "write each run's figures to FILE (JSON)", nullptr, "FILE"},
    {"", "save", "write each trained model to DIR/<run>.safetensors (several seeds: DIR/<run>_seed<S>.safetensors)",
     nullptr, "DIR"},
    {"", "init-from", "start each run from DIR/<run>.safetensors", nullptr, "DIR"},
    {"", "batch-order", "FILE with one permutation of the training split per epoch: replays a run made elsewhere",
     nullptr, "FILE"},
    {"", "sample", "write N words with each run's model", nullptr, "N"},
    {"", "temperature", "divide the logits by T before sampling", "1.0", "T"},
    {"", "top-k", "sample among the K likeliest tokens only (0: all)", "0", "K"},
    {"", "sample-seed", "seed of the sampling stream", "0", "S"},
    {"", "stats",
     "record each module's output and the gradient reaching it, each parameter's gradient and update, and write "
     "them to FILE (CSV: run,seed,step,layer,quantity,statistic,value; scripts/plot_stats.sh draws it)",
     nullptr, "FILE"},
    {"", "stats-every", "with --stats: record the first step, every N-th and the last (default: about 30 a run)",
     nullptr, "N"},
    {"", "attention",
     "after training, write every layer's and head's attention weights for WORD (run as .WORD) to FILE (CSV: "
     "run,seed,layer,head,query,key,query_token,key_token,weight; scripts/plot_attention.sh draws it)",
     nullptr, "WORD,FILE"},
    {"", "quiet", "no progress lines", nullptr, nullptr},
    {"", "help", "show this help", nullptr, nullptr},
    {"Model", "layers", "transformer blocks", "4", "N"},
    {"Model", "heads", "attention heads (must divide --width)", "4", "N"},
    {"Model", "width", "channels, C", "64", "N"},
    {"Model", "block-size", "positions: words of up to N - 1 letters", "32", "N"},
    {"Model", "init",
     "makemore (PyTorch's defaults) or xavier (xavier_uniform_ on the blocks' Linear weights, biases 0)", "makemore",
     "NAME"},
    {"Data parallel", "distributed",
     "train data-parallel on the processes mpirun started (mpirun -np N charlm --distributed): each rank takes "
     "batch-size / N words of every batch; rank 0 prints and writes the files",
     nullptr, nullptr},
    {"Data parallel", "sync-bn",
     "with --distributed: batch and batch-masked as SyncBatchNorm (statistics over the whole global batch)", nullptr,
     nullptr},
    {"Comparing runs", "tensorboard", "write TensorBoard event files, one per run, to DIR/<run>/seed<S>/", nullptr,
     "DIR"},
    {"Comparing runs", "report", "write a page comparing the runs' curves to FILE.html (opens offline)", nullptr,
     "FILE"},
};

std::string default_data_file() {
  const fs::path built_from = fs::path(MINIDL_DATA_DIR) / "words.txt";
  std::error_code error;
  if (fs::exists(built_from, error)) return built_from.string();
  throw UsageError(cat("cannot find the word list ", built_from.string(), ": pass --data FILE"));
}

void read_model(const apps::CommandLine& line, ModelOptions& m) {
  m.layers = line.whole("layers", 1, 1000);
  m.width = line.whole("width", 1, 1 << 16);
  m.heads = line.whole("heads", 1, m.width);
  if (m.width % m.heads != 0)
    throw UsageError(
        cat("--heads ", m.heads, " does not divide --width ", m.width, ": each head takes width / heads channels"));
  m.block_size = line.whole("block-size", 2, 1 << 16);
  m.init = parse_init(line.text("init"));
}

void read_training(const apps::CommandLine& line, RunOptions& r) {
  r.steps = line.whole("steps", 0);
  r.batch_size = line.whole("batch-size", 1);
  r.lr = line.positive("lr");
  r.trainer.warmup = line.whole("warmup", 0);
  const std::string schedule = line.text("schedule");
  if (schedule != "constant" && schedule != "cosine")
    throw UsageError(cat("--schedule: unknown schedule \"", schedule, "\": choose constant or cosine"));
  r.trainer.schedule = schedule == "cosine" ? lesson::ScheduleKind::Cosine : lesson::ScheduleKind::Constant;
  r.eval_every = line.whole("eval-every", 1);
}

void read_sampling(const apps::CommandLine& line, Settings& s) {
  if (line.given("sample")) s.samples = line.whole("sample", 0, 1000000);
  s.sample.temperature = line.positive("temperature");
  s.sample.top_k = line.whole("top-k", 0, kVocabSize);
  s.sample_seed = uint64_t(line.whole("sample-seed", 0));
}

// --stats-every's default and --attention, after the model's and training's options.
void read_diagnostics(const apps::CommandLine& line, Settings& s) {
  if (!s.stats.empty()) s.run.stats_every = s.stats_every ? s.stats_every : lesson::default_stats_every(s.run.steps);
  if (line.given("attention")) s.attention = parse_attention(line.text("attention"), s.run.model.block_size);
}

}  // namespace

std::optional<Settings> parse_settings(int argc, char** argv) {
  cxxopts::Options options = apps::declare_options("charlm",
                                                   "Trains a character-level transformer (makemore's) on a word "
                                                   "list, once per norm, position and seed, then writes new words.",
                                                   kOptions);
  const apps::CommandLine line(options, argc, argv);
  if (line.print_help(options)) return std::nullopt;
  Settings s;
  s.norms = apps::comma_list("--norm", line.text("norm"), parse_norm);
  s.positions = apps::comma_list("--norm-position", line.text("norm-position"), parse_position);
  apps::read_shared(line, s);
  read_model(line, s.run.model);
  read_training(line, s.run);
  read_sampling(line, s);
  s.data_file = line.given("data") ? line.text("data") : default_data_file();
  read_diagnostics(line, s);
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
