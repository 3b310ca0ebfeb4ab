// Nothing to synchronize, on words: charlm trained data-parallel on N = 1, 2, 4 ranks at one
// global batch of words, with LayerNorm, local BatchNorm and SyncBatchNorm. Each (N, set-up)
// is one `mpirun -np N charlm --distributed` invocation over every seed; its summary gives
// the validation losses and its curves the first steps' losses, which the rule compares
// with one rank's.
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "experiments/experiments.hpp"
#include "experiments/mpi_runs.hpp"
#include "runs/seeds.hpp"

namespace minidl::lab {

namespace {

constexpr int64_t kGlobalBatch = 32;  // charlm's default: 16 words a rank at N = 2, 8 at N = 4
constexpr int64_t kEarlySteps = 20;   // the steps whose losses are compared one by one
constexpr double kSameStep = 1e-3;    // a step loss this close to one rank's is the same model
constexpr double kFloor = 0.01;       // the smallest validation-loss shift, in nats, that counts

int64_t steps(const Settings& s) { return s.quick ? kEarlySteps : 300; }
std::vector<int> rank_counts(const Settings& s) { return s.quick ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 4}; }

struct Setup {
  const char* label;
  const char* name;
};
std::vector<Setup> setups() {
  return {{"layer", "LayerNorm"}, {"batch", "BatchNorm1d (local)"}, {"sync_batch", "SyncBatchNorm"}};
}

// Per run name ("layer-pre") and seed, the first kEarlySteps step losses of a --curves file.
std::map<std::pair<std::string, uint64_t>, std::string> early_losses(const std::string& csv) {
  std::map<std::pair<std::string, uint64_t>, std::string> losses;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // run,seed,step,loss
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::array<std::string, 4> fields;
    for (std::string& field : fields) std::getline(in, field, ',');
    const auto& [run, seed, step, loss] = fields;
    if (std::stoll(step) > kEarlySteps) continue;
    std::string& text = losses[{run, std::stoull(seed)}];
    text += (text.empty() ? "" : " ") + loss;
  }
  return losses;
}

// charlm on `ranks` ranks over every seed: one record per run (norm label, seed, losses).
std::vector<Record> distributed_runs([[maybe_unused]] const Context& c, int ranks, [[maybe_unused]] bool sync_bn) {
#if MINIDL_WITH_MPI && defined(MINIDL_LAB_CHARLM_EXE) && defined(MINIDL_LAB_MPIRUN)
  const std::string arguments =
      cat(" --distributed", sync_bn ? " --sync-bn --norm batch" : " --norm layer,batch", " --seeds ",
          lesson::seeds_text(c.settings.seeds), " --steps ", steps(c.settings), " --eval-every ", steps(c.settings),
          " --batch-size ", kGlobalBatch, " --threads 1 --quiet --data ", quoted(c.settings.data_dir + "/words.txt"));
  const MpiOutput out = run_under_mpirun("charlm_sync", cat("minidl_lab_charlm_", ranks, sync_bn ? "s" : "l"), ranks,
                                         MINIDL_LAB_CHARLM_EXE, arguments, true);
  const auto early = early_losses(out.curves);
  std::vector<Record> records;
  const double nan = std::nan("");
  const nlohmann::json summary = nlohmann::json::parse(out.summary);  // outlives the loop over its runs
  for (const nlohmann::json& run : summary.at("runs")) {
    const std::string norm = run.at("norm");
    const auto seed = run.at("seed").get<uint64_t>();
    const bool ok = run.at("error").is_null() && run.at("val_loss").is_number();
    auto figure = [&](const char* key) { return ok ? run.at(key).get<double>() : nan; };
    const auto losses = early.find({norm + "-" + run.at("position").get<std::string>(), seed});
    Record r;
    r.set("ranks", double(ranks)).set("rank_batch", double(kGlobalBatch / ranks));
    r.set("norm", sync_bn ? "sync_batch" : norm).set("seed", double(seed)).set("status", ok ? "ok" : "failed");
    r.set("train_loss", figure("train_loss")).set("val_loss", figure("val_loss"));
    r.set("early_losses", losses == early.end() ? "" : losses->second);
    records.push_back(r);
  }
  return records;
#else
  return {Record().set("ranks", double(ranks)).set("status", "not run")};
#endif
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> values;
  std::istringstream in(text);
  for (double v; in >> v;) values.push_back(v);
  return values;
}

// The largest |step loss on N ranks - on one rank| over the first steps of every seed (NaN
// when a run is missing or has other steps).
double early_gap(const std::vector<Record>& records, const char* label, int ranks) {
  const auto at_n = where_num(where(records, {{"norm", label}}), "ranks", ranks);
  const auto at_one = where_num(where(records, {{"norm", label}}), "ranks", 1);
  double gap = at_n.empty() ? std::nan("") : 0.0;
  for (const Record& r : at_n) {
    const auto one = where_num(at_one, "seed", r.num("seed"));
    const std::vector<double> a = numbers(r.text("early_losses"));
    const std::vector<double> b = one.empty() ? std::vector<double>{} : numbers(one.front().text("early_losses"));
    if (a.empty() || a.size() != b.size()) return std::nan("");
    for (size_t i = 0; i < a.size(); ++i) gap = std::max(gap, std::fabs(a[i] - b[i]));
  }
  return gap;
}

// How far the mean validation loss on N ranks is from one rank's, and its bound.
RankShift shift_at(const std::vector<Record>& records, const char* label, int ranks) {
  return shift_from_one_rank(records, label, ranks, "val_loss", kFloor);
}

class CharlmSync : public Experiment {
 public:
  CharlmSync()
      : Experiment({"charlm_sync", "Nothing to synchronize, on words",
                    "LayerNorm's statistics are each token's own, so data-parallel training has nothing to "
                    "synchronize for it: on N processes it trains as on one; BatchNorm on each process's shard is "
                    "a different model unless SyncBatchNorm communicates every forward and backward",
                    "Layer Normalization note, \"Why transformers use it\""}) {}
  std::string setup(const Settings& s) const override {
    std::string list;
    for (int n : rank_counts(s)) list += cat(list.empty() ? "" : ", ", n, " (", kGlobalBatch / n, " words each)");
    return cat("charlm at its defaults (4 pre-norm blocks of 64 channels, AdamW lr 5e-4) for ", steps(s),
               " steps at the global batch of ", kGlobalBatch, " words split across ", list,
               " ranks: `mpirun -np N charlm --distributed` (every rank one thread, oversubscribed past 2 on this "
               "2-core machine), with LayerNorm, local BatchNorm1d (each rank's statistics over its own words' "
               "positions, padding included) and SyncBatchNorm (`--sync-bn`).",
               s.quick ? " With --quick the runs are too short to mean anything: it proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat("Per set-up and N > 1: the first ", kEarlySteps,
               " step losses are the same model's when each is within ", kSameStep,
               " of one rank's for every seed (float32's reordering of the gradient sums moves them by about 1e-6; "
               "other statistics move the first step's loss itself), and the mean validation loss over seeds "
               "is the same when within max(",
               kFloor,
               " nats, 2 standard errors of the difference) of one rank's. (a) LayerNorm is the same on every "
               "N by both; (b) SyncBatchNorm is the same on every N by both; (c) local BatchNorm is a different "
               "model: its step losses leave the bound at some N. Held: (a), (b) and (c); held partly: (a) "
               "and one of (b), (c); did not hold: otherwise.");
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    const double runs = double(c.settings.seeds.size());
    for (int n : rank_counts(c.settings))
      for (bool sync_bn : {false, true}) {
        // As charlm_job's cost (230 a word-step-layer), times the ranks' overhead on 2 cores.
        const double cost = 230.0 * runs * (sync_bn ? 1.0 : 2.0) * double(steps(c.settings) * kGlobalBatch * 4) *
                            (1.0 + 0.25 * double(n));
        jobs.push_back({cost, [&c, n, sync_bn] { return distributed_runs(c, n, sync_bn); }});
      }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    if (not_run(records)) return {Verdict::NotRun, "not run: MPI support not built."};
    auto same_everywhere = [&](const char* label) {
      for (int n : rank_counts(s))
        if (n > 1 && !(early_gap(records, label, n) <= kSameStep && shift_at(records, label, n).same())) return false;
      return true;
    };
    auto steps_differ = [&](const char* label) {
      for (int n : rank_counts(s))
        if (n > 1 && early_gap(records, label, n) > kSameStep) return true;
      return false;
    };
    const bool a = same_everywhere("layer"), b = same_everywhere("sync_batch"), c = steps_differ("batch");
    const Verdict verdict = !a       ? Verdict::DidNotHold
                            : b && c ? Verdict::Held
                            : b || c ? Verdict::HeldPartly
                                     : Verdict::DidNotHold;
    const int largest = rank_counts(s).back();
    auto figures = [&](const char* label) {
      const RankShift d = shift_at(records, label, largest);
      return cat("step losses within ", sci(early_gap(records, label, largest)), ", validation loss ",
                 d.shift >= 0 ? "+" : "", fixed(d.shift), " (bound ", fixed(d.bound), ")");
    };
    return {verdict, cat("At N = ", largest, " against one rank: LayerNorm's ", figures("layer"), "; SyncBatchNorm's ",
                         figures("sync_batch"), "; local BatchNorm's ", figures("batch"), ". (a) ",
                         a ? "holds" : "does not hold", "; (b) ", b ? "holds" : "does not hold", "; (c) ",
                         c ? "holds" : "does not hold", ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    if (not_run(records)) return {"Not run: MPI support not built (configure with MPI: docs/distributed.md).\n"};
    std::vector<std::vector<std::string>> rows;
    for (int n : rank_counts(s)) {
      std::vector<std::string> row{cat(n, " x ", kGlobalBatch / n)};
      for (const Setup& setup : setups()) {
        const lesson::Spread val = spread(where_num(where(records, {{"norm", setup.label}}), "ranks", n), "val_loss");
        row.push_back(mean_range(val) +
                      (n == 1 ? "" : cat(" (steps within ", sci(early_gap(records, setup.label, n)), ")")));
      }
      rows.push_back(row);
    }
    std::vector<std::string> header{"ranks x words each"};
    for (const Setup& setup : setups()) header.push_back(setup.name);
    return {cat("Validation loss, mean [min, max] over seeds (and the largest gap of the first ", kEarlySteps,
                " step losses from one rank's):\n\n", markdown_table(header, rows)),
            {draw_picture(records, s)}};
  }

 private:
  static std::string draw_picture(const std::vector<Record>& records, const Settings& s) {
    std::vector<double> ns;
    for (int n : rank_counts(s)) ns.push_back(n);
    std::string script = plot_header("charlm_sync.png");
    script += cat("set title 'charlm at a global batch of ", kGlobalBatch,
                  " words on N ranks (mean and range over seeds)'\nset logscale x 2\nset xlabel 'ranks'\n"
                  "set xrange [0.8:5]\nset ylabel 'validation loss (nats)'\nset key top left\n");
    const char* colours[] = {"#d95f02", "#1b9e77", "#66a61e"};
    std::string plots;
    for (size_t i = 0; i < setups().size(); ++i) {
      script += series_block(cat("v", i), where(records, {{"norm", setups()[i].label}}), "ranks", ns, "val_loss");
      plots += cat(i ? ", " : "plot ", "$v", i, " using ($1*", 1.0 + 0.04 * double(i),
                   "):2:3:4 with yerrorlines lw 2 lc rgb '", colours[i], "' title '", setups()[i].name, "'");
    }
    return draw(s.out_dir, "charlm_sync.png", script + plots + "\n");
  }
};

}  // namespace

std::shared_ptr<const Experiment> charlm_sync_experiment() { return std::make_shared<CharlmSync>(); }

}  // namespace minidl::lab
