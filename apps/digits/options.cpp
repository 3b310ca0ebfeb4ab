#include "options.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cxxopts.hpp>
#include <filesystem>
#include <thread>

#include "cli.hpp"
#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::digits {

namespace {

using lesson::Arch;
using lesson::NormKind;

// In --help's order.
const apps::OptionSpec kOptions[] = {
    {"", "norm", "comma list of none, batch, layer, rms, group, dyt (instance: --arch cnn only)", "none,batch,layer",
     "LIST"},
    {"", "seeds", "train every norm once per seed (each seeds its initial weights and shuffling): 0-4, 0,3,7", "0-4",
     "LIST"},
    {"", "epochs", "passes over the training split", "5", "N"},
    {"", "lr", "SGD learning rate", "0.05", "LR"},
    {"", "batch-size", "examples per batch (more than the split: one batch of it all)", "64", "N"},
    {"", "drop-last", "drop the short last batch of each epoch (default: keep it, as the lesson does)", nullptr,
     nullptr},
    {"", "depth", "Linear + norm + Tanh blocks", "8", "N"},
    {"", "width", "features per hidden layer", "64", "N"},
    {"", "groups", "GroupNorm's groups (must divide --width; the CNN: 16)", "8", "G"},
    {"", "threads", "threads for OpenMP and OpenBLAS in each run (default: 1 when runs train at once, else theirs)",
     nullptr, "N"},
    {"", "jobs",
     "train up to N runs at once, each on its own thread, with the results of one by one (default: the machine's "
     "cores, or 1 with --threads)",
     nullptr, "N"},
    {"", "data", "directory with digits.csv and the split files (default: the project's data/)", nullptr, "DIR"},
    {"", "curves", "write every step's loss to FILE (CSV: run,seed,epoch,step,loss)", nullptr, "FILE"},
    {"", "val-curves",
     "write each epoch's validation loss and accuracy to FILE (CSV: run,seed,epoch,step,val_loss,val_accuracy)",
     nullptr, "FILE"},
    {"", "summary", "write each run's figures to FILE (JSON)", nullptr, "FILE"},
    {"", "save", "write each trained model to DIR/<run>.safetensors (several seeds: DIR/<run>_seed<S>.safetensors)",
     nullptr, "DIR"},
    {"", "init-from", "start each run (every seed) from DIR/<run>.safetensors instead of a random init", nullptr,
     "DIR"},
    {"", "batch-order", "FILE with one permutation of the training split per epoch: replays a run made elsewhere",
     nullptr, "FILE"},
    {"", "stats",
     "record each layer's statistics (tanh outputs, their gradients, weight gradients and updates) and write them "
     "to FILE (CSV: run,seed,step,layer,quantity,statistic,value)",
     nullptr, "FILE"},
    {"", "stats-every",
     "with --stats: record every N-th step and each epoch's last (default: about 30 snapshots a run)", nullptr, "N"},
    {"", "quiet", "no progress lines", nullptr, nullptr},
    {"", "distributed",
     "train data-parallel on the processes mpirun started (mpirun -np N digits --distributed): each rank takes "
     "batch-size / N of every batch; rank 0 prints and writes the files",
     nullptr, nullptr},
    {"", "sync-bn", "with --distributed: BatchNorm layers as SyncBatchNorm (statistics over the whole global batch)",
     nullptr, nullptr},
    {"", "help", "show this help", nullptr, nullptr},
    // The trainer's tools (training/trainer_setup.hpp says what each does).
    {"", "optimizer", "sgd, adam or adamw (--lr applies to each)", "sgd", "NAME"},
    {"", "momentum", "SGD's momentum (default 0; not with adam/adamw)", nullptr, "M"},
    {"", "weight-decay", "L2 penalty (sgd, adam) or decoupled decay (adamw); default 0, adamw 0.01", nullptr, "WD"},
    {"", "betas", "Adam's and AdamW's betas (default 0.9,0.999; not with sgd)", nullptr, "B1,B2"},
    {"", "warmup", "raise the lr linearly from 0.01 lr over the first STEPS steps (LinearLR), then the schedule", "0",
     "STEPS"},
    {"", "schedule", "constant, cosine (down to 0 at the last step, after the warmup) or step (x0.5 every epoch)",
     "constant", "NAME"},
    {"", "clip", "clip the gradients' total L2 norm to NORM before each step", nullptr, "NORM"},
    {"Model", "arch",
     "mlp (the lesson's deep tanh net), resmlp-pre or resmlp-post (residual MLP blocks), cnn (3 convolutions, "
     "global average pooling, Linear; docs/cnn.md)",
     "mlp", "ARCH"},
    {"Model", "blocks", "residual blocks of a resmlp arch (default 4)", nullptr, "N"},
    {"Model", "expansion", "a resmlp block's hidden width over --width (default 4)", nullptr, "N"},
    {"Model", "dropout", "Dropout(P) at the end of each resmlp block's MLP, in [0, 1) (default 0)", nullptr, "P"},
    {"Model", "init",
     "pytorch (nn.Linear's default), xavier (xavier_uniform_ with the activation's gain) or kaiming "
     "(kaiming_normal_ fan_in), biases 0",
     "pytorch", "SCHEME"},
    {"Model", "summary-model", "print each model's layers and parameter counts, train nothing", nullptr, nullptr},
    {"Comparing runs", "tensorboard", "write TensorBoard event files, one per run, to DIR/<norm>/seed<S>/", nullptr,
     "DIR"},
    {"Comparing runs", "report", "write a page comparing the runs' curves to FILE.html (opens offline)", nullptr,
     "FILE"},
};

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

// "none,batch,layer" -> the norms in that order; an empty item or a norm twice is refused.
std::vector<NormKind> parse_norms(const std::string& list) {
  const std::string choices = "choose from none, batch, layer, rms, group, dyt";
  if (list.empty()) throw UsageError("--norm is empty: " + choices);
  return apps::comma_list("--norm", list, [&](const std::string& name) {
    if (name.empty()) throw UsageError(cat("--norm \"", list, "\" has an empty item: ", choices));
    return lesson::parse_norm(name);
  });
}

std::array<double, 2> parse_betas(const std::string& text) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw UsageError(cat("--betas: \"", text, "\" is not two numbers B1,B2 (such as 0.9,0.999)"));
  return {apps::parse_real("--betas", text.substr(0, comma)), apps::parse_real("--betas", text.substr(comma + 1))};
}

// The value of `choices` whose name (as name_of prints it) is `text`; else UsageError(refusal).
template <typename Kind, typename NameOf>
Kind named(const std::string& text, std::initializer_list<Kind> choices, NameOf name_of, const std::string& refusal) {
  for (Kind kind : choices)
    if (name_of(kind) == text) return kind;
  throw UsageError(refusal);
}

lesson::TrainerSetup read_trainer(const apps::CommandLine& line) {
  using lesson::OptimizerKind, lesson::ScheduleKind;
  lesson::TrainerSetup t;
  const auto name_of = [](auto kind) { return lesson::short_name(kind); };
  t.optimizer =
      named(line.text("optimizer"), {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW}, name_of,
            cat("--optimizer: unknown optimizer \"", line.text("optimizer"), "\" (choose sgd, adam or adamw)"));
  if (line.given("momentum")) t.momentum = line.real("momentum");
  if (line.given("weight-decay")) t.weight_decay = line.real("weight-decay");
  if (line.given("betas")) t.betas = parse_betas(line.text("betas"));
  t.warmup = line.whole("warmup", 0);
  t.schedule =
      named(line.text("schedule"), {ScheduleKind::Constant, ScheduleKind::Cosine, ScheduleKind::Step}, name_of,
            cat("--schedule: unknown schedule \"", line.text("schedule"), "\" (choose constant, cosine or step)"));
  if (line.given("clip")) t.clip = line.positive("clip");
  const bool sgd = t.optimizer == OptimizerKind::Sgd;
  if (t.momentum && !sgd)
    throw UsageError(cat("--momentum applies to --optimizer sgd only, not ", lesson::short_name(t.optimizer),
                         " (Adam's momentum is --betas)"));
  if (t.betas && sgd) throw UsageError("--betas applies to --optimizer adam or adamw only, not sgd (see --momentum)");
  if (t.momentum && !(*t.momentum >= 0.0 && std::isfinite(*t.momentum)))
    throw UsageError(cat("--momentum must be a number >= 0, got ", *t.momentum));
  if (t.weight_decay && !(*t.weight_decay >= 0.0 && std::isfinite(*t.weight_decay)))
    throw UsageError(cat("--weight-decay must be a number >= 0, got ", *t.weight_decay));
  if (t.betas)
    for (double b : *t.betas)
      if (!(b >= 0.0 && b < 1.0)) throw UsageError(cat("--betas: each beta must be in [0, 1), got ", b));
  return t;
}

// The "Model" options, and the refusal of those that do not go with --arch. Reads s.norms.
void read_model(const apps::CommandLine& line, Settings& s) {
  using lesson::InitScheme;
  lesson::ModelOptions& m = s.train.model;
  m.arch = named(
      line.text("arch"), {Arch::MLP, Arch::ResMLPPre, Arch::ResMLPPost, Arch::CNN}, lesson::arch_name,
      cat("--arch: unknown architecture \"", line.text("arch"), "\": choose from mlp, resmlp-pre, resmlp-post, cnn"));
  m.init = named(line.text("init"), {InitScheme::PyTorch, InitScheme::Xavier, InitScheme::Kaiming}, lesson::init_name,
                 cat("--init: unknown scheme \"", line.text("init"),
                     "\": choose from pytorch, xavier, kaiming (--init-from DIR starts from checkpoints)"));
  s.summary_model = line.given("summary-model");
  const std::string arch = lesson::arch_name(m.arch);
  const bool residual = m.arch == Arch::ResMLPPre || m.arch == Arch::ResMLPPost;
  for (const char* name : {"blocks", "expansion", "dropout"})
    if (line.given(name) && !residual)
      throw UsageError(cat("--", name, " needs --arch resmlp-pre or resmlp-post (--arch ", arch, " has none)"));
  for (const char* name : {"depth", "groups"})
    if (line.given(name) && residual)
      throw UsageError(
          cat("--", name, " is for --arch mlp; --arch ", arch, " takes --blocks, --expansion and --width"));
  for (const char* name : {"depth", "width"})
    if (line.given(name) && m.arch == Arch::CNN)
      throw UsageError(cat("--", name, " is for --arch mlp and the resmlp archs; --arch cnn has fixed sizes (",
                           "16 and 32 channels, docs/cnn.md)"));
  if (line.given("blocks")) m.blocks = line.whole("blocks", 1);
  if (line.given("expansion")) m.expansion = line.whole("expansion", 1);
  if (line.given("dropout")) {
    m.dropout = line.real("dropout");
    if (!(m.dropout >= 0.0 && m.dropout < 1.0))
      throw UsageError(cat("--dropout must be in [0, 1), got ", line.text("dropout")));
  }
  if (m.init != InitScheme::PyTorch && !s.init_from_dir.empty())
    throw UsageError(
        cat("--init ", lesson::init_name(m.init), " and --init-from both set the initial weights: give one"));
  if (m.init != InitScheme::PyTorch && m.arch == Arch::CNN)
    throw UsageError(cat("--init ", lesson::init_name(m.init),
                         " re-draws Linear layers only: --arch cnn takes --init pytorch (its convolutions would keep "
                         "PyTorch's draw)"));
  if (!residual) return;
  if (!line.given("norm")) s.norms = {NormKind::Layer};
  for (NormKind norm : s.norms)
    if (norm != NormKind::Layer && norm != NormKind::RMS && norm != NormKind::DyT)
      throw UsageError(cat("--arch ", arch, " takes --norm layer, rms or dyt, got ", lesson::short_name(norm)));
}

}  // namespace

std::optional<Settings> parse_settings(int argc, char** argv) {
  cxxopts::Options options = apps::declare_options(
      "digits", "Trains the lesson's deep tanh network on the handwritten digits, once per norm and seed.", kOptions);
  const apps::CommandLine line(options, argc, argv);
  if (line.print_help(options)) return std::nullopt;
  Settings s;
  s.norms = parse_norms(line.text("norm"));
  apps::read_shared(line, s);
  lesson::TrainOptions& t = s.train;
  t.epochs = line.whole("epochs", 1);
  t.lr = line.positive("lr");
  t.batch_size = line.whole("batch-size", 1);
  t.drop_last = line.given("drop-last");
  t.trainer = read_trainer(line);
  t.net.depth = line.whole("depth", 1);
  t.net.width = line.whole("width", 1);
  t.net.groups = line.whole("groups", 1);
  if (line.given("jobs")) {
    s.jobs = int(line.whole("jobs", 1, apps::kMaxThreads));
  } else {  // small runs use the cores best side by side; --threads alone asks for one at a time
    s.jobs = s.threads ? 1 : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  s.data_dir = line.given("data") ? line.text("data") : default_data_dir();
  read_model(line, s);
  check_settings(s);
  return s;
}

}  // namespace minidl::digits
