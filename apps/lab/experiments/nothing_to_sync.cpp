// 15. Nothing to synchronize: the lesson's network trained data-parallel on N = 1, 2, 4, 8
// ranks at one global batch, with local BatchNorm, SyncBatchNorm and LayerNorm, and what each
// rank hands to the collectives per step. Each (N, set-up) is one `mpirun -np N digits
// --distributed` run over every seed; its summary gives the figures and the collectives' own
// count of the traffic, which must equal the count made here from the model.
#include <nlohmann/json.hpp>

#include "experiments/experiments.hpp"
#include "mpi_runs.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr int64_t kGlobalBatch = 64;
constexpr double kFloor = 0.01;                     // the smallest accuracy shift that counts as "different"
constexpr int64_t kBucketBytes = 25 * 1024 * 1024;  // DistributedDataParallel's default cap

std::vector<int> rank_counts(const Settings& s) {
  if (s.quick) return {1, 2};
  return {1, 2, 4, 8};
}

// The three set-ups: the label in records and tables, the lesson's norm, and --sync-bn.
struct Setup {
  const char* label;
  const char* name;
  NormKind norm;
  bool sync_bn;
};
const std::vector<Setup>& setups() {
  static const std::vector<Setup> list{{"batch", "BatchNorm1d (local)", NormKind::Batch, false},
                                       {"sync_batch", "SyncBatchNorm", NormKind::Batch, true},
                                       {"layer", "LayerNorm", NormKind::Layer, false}};
  return list;
}
// The digits program on `ranks` ranks over every seed: one record per run, each carrying the
// invocation's traffic as counted from the model and as the collectives counted it.
std::vector<Record> distributed_runs([[maybe_unused]] const Context& c, int ranks, [[maybe_unused]] bool sync_bn,
                                     [[maybe_unused]] const std::vector<NormKind>& norms) {
#if MINIDL_WITH_MPI && defined(MINIDL_LAB_DIGITS_EXE) && defined(MINIDL_LAB_MPIRUN)
  std::string norm_list;
  for (NormKind n : norms) norm_list += cat(norm_list.empty() ? "" : ",", lesson::short_name(n));
  const std::string arguments =
      cat(" --distributed", sync_bn ? " --sync-bn" : "", " --norm ", norm_list, " --seeds ",
          lesson::seeds_text(c.settings.seeds), " --epochs ", lesson_training(c.settings).epochs, " --batch-size ",
          kGlobalBatch, " --threads 1 --quiet --data ", quoted(c.settings.data_dir));
  const nlohmann::json summary =
      nlohmann::json::parse(run_under_mpirun("nothing_to_sync", cat("minidl_lab_sync_", ranks, sync_bn ? "s" : "l"),
                                             ranks, MINIDL_LAB_DIGITS_EXE, arguments, false)
                                .summary);
  // What the model says the invocation handed to collectives: per run its set-up, per step the step's.
  int64_t counted_bytes = 0, counted_calls = 0;
  std::vector<Record> records;
  const double nan = std::nan("");
  for (const nlohmann::json& run : summary.at("runs")) {
    const NormKind norm = run.at("norm") == "batch" ? NormKind::Batch : NormKind::Layer;
    const RankTraffic t = rank_traffic(norm, sync_bn, ranks);
    const auto steps = run.at("steps").get<int64_t>();
    counted_bytes += t.setup_bytes + steps * t.step_bytes();
    counted_calls += t.setup_collectives + steps * t.step_collectives;
    const bool ok = run.at("error").is_null() && run.at("val_accuracy").is_number();
    auto figure = [&](const char* key) { return ok ? run.at(key).get<double>() : nan; };
    Record r;
    r.set("ranks", double(ranks)).set("rank_batch", double(kGlobalBatch / ranks));
    r.set("norm", norm == NormKind::Batch && sync_bn ? "sync_batch" : lesson::short_name(norm));
    r.set("seed", run.at("seed").get<double>()).set("status", ok ? "ok" : "failed");
    r.set("steps", double(steps)).set("train_loss", figure("train_loss")).set("val_loss", figure("val_loss"));
    r.set("val_accuracy", figure("val_accuracy"));
    r.set("step_bytes", double(t.step_bytes())).set("step_collectives", double(t.step_collectives));
    records.push_back(r);
  }
  const nlohmann::json& measured = summary.at("distributed");
  for (Record& r : records)
    r.set("counted_bytes", double(counted_bytes))
        .set("measured_bytes", measured.at("bytes").get<double>())
        .set("counted_collectives", double(counted_calls))
        .set("measured_collectives", measured.at("collectives").get<double>());
  return records;
#else
  return {Record().set("ranks", double(ranks)).set("status", "not run")};
#endif
}

// Per (N, set-up) the spread of a figure over seeds.
lesson::Spread figure_at(const std::vector<Record>& records, const char* label, int ranks, const char* figure) {
  return spread(where_num(where(records, {{"norm", label}}), "ranks", ranks), figure);
}

// How far the mean validation accuracy on N ranks is from one rank's, and its bound.
RankShift shift_at(const std::vector<Record>& records, const char* label, int ranks) {
  return shift_from_one_rank(records, label, ranks, "val_accuracy", kFloor);
}

std::string bytes_text(int64_t bytes) {
  return bytes < 1000 ? cat(bytes, " B") : cat(fixed(double(bytes) / 1000.0, 1), " KB");
}

class NothingToSync : public Experiment {
 public:
  NothingToSync()
      : Experiment({"nothing_to_sync", "Nothing to synchronize",
                    "LayerNorm has no running statistics and per-example statistics, so there is nothing to "
                    "synchronize across devices in data-parallel training: on N processes it trains as on one; "
                    "BatchNorm on each process's shard is a different model unless SyncBatchNorm pays for "
                    "communication every forward and backward",
                    "lesson, the LayerNorm card"}) {}
  std::string setup(const Settings& s) const override {
    std::string list;
    for (int n : rank_counts(s)) list += cat(list.empty() ? "" : ", ", n, " (", kGlobalBatch / n, " each)");
    return cat("The lesson's network and training (SGD lr 0.05, ", lesson_training(s).epochs,
               " epoch(s)) at the global batch ", kGlobalBatch, " split across ", list,
               " ranks: `mpirun -np N digits --distributed` (every rank one thread, oversubscribed past 2 on this "
               "2-core machine), with local BatchNorm1d (each rank normalizes its own shard), SyncBatchNorm "
               "(`--sync-bn`) and LayerNorm. The traffic is what a rank hands to MPI's collectives per training "
               "step, counted from the model (docs/distributed.md), and checked against the collectives' own "
               "counter (`distributed::traffic()`, in the summary of every run).");
  }
  std::string rule() const override {
    return cat(
        "A set-up trains as on one process when, at every N, its mean validation accuracy over seeds is "
        "within max(",
        kFloor,
        ", 2 standard errors of the difference) of its mean on one rank. (a) LayerNorm hands the "
        "collectives nothing for its norm (gradients and the step's loss and stop flag only) and trains as "
        "on one process; (b) SyncBatchNorm trains as on one process; (c) local BatchNorm does not (its "
        "accuracy leaves the bound at some N). The counted traffic must equal the collectives' counter in "
        "every run, or the verdict is \"did not hold\". Held: (a), (b) and (c); held partly: (a) and one "
        "of (b), (c); did not hold: otherwise.");
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    const double runs = double(c.settings.seeds.size() * size_t(lesson_training(c.settings).epochs));
    for (int n : rank_counts(c.settings))
      for (bool sync_bn : {false, true}) {
        const std::vector<NormKind> norms =
            sync_bn ? std::vector<NormKind>{NormKind::Batch} : std::vector<NormKind>{NormKind::Batch, NormKind::Layer};
        // Like train_job's cost, times the ranks that share the cores and their collectives.
        const double cost = runs * double(norms.size()) * 1437.0 * 8.0 * (1.0 + 8.0 / 64.0) * n * (sync_bn ? 2 : 1);
        jobs.push_back({cost, [&c, n, sync_bn, norms] { return distributed_runs(c, n, sync_bn, norms); }});
      }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    if (not_run(records)) return {Verdict::NotRun, "not run: MPI support not built."};
    auto same_everywhere = [&](const char* label) {
      for (int n : rank_counts(s))
        if (n > 1 && !shift_at(records, label, n).same()) return false;
      return true;
    };
    // Every invocation's records carry its counted and measured traffic.
    size_t invocations = 0, matching = 0;
    for (int n : rank_counts(s))
      for (const char* label : {"layer", "sync_batch"}) {
        const auto at = where_num(where(records, {{"norm", label}}), "ranks", n);
        if (at.empty()) continue;
        ++invocations;
        const Record& r = at.front();
        matching += r.num("counted_bytes") == r.num("measured_bytes") &&
                    r.num("counted_collectives") == r.num("measured_collectives");
      }
    const bool counted_right = matching == invocations;
    const RankTraffic layer = rank_traffic(NormKind::Layer, false, 2);
    const bool a = layer.buffer_bytes == 0 && layer.statistics_bytes == 0 && same_everywhere("layer");
    const bool b = same_everywhere("sync_batch"), c = !same_everywhere("batch");
    const Verdict verdict = !counted_right || !a ? Verdict::DidNotHold
                            : b && c             ? Verdict::Held
                            : b || c             ? Verdict::HeldPartly
                                                 : Verdict::DidNotHold;
    const int largest = rank_counts(s).back();
    const RankTraffic sync = rank_traffic(NormKind::Batch, true, largest);
    auto shift_text = [&](const char* label) {
      const RankShift d = shift_at(records, label, largest);
      return cat(d.shift >= 0 ? "+" : "", fixed(d.shift), " (bound ", fixed(d.bound), ")");
    };
    return {verdict,
            cat("The traffic counted from the model equals the collectives' counter in ", matching, " of ", invocations,
                " runs of mpirun (bytes and calls). At N = ", largest,
                " the mean validation accuracy moves from one rank's by: LayerNorm ", shift_text("layer"),
                ", SyncBatchNorm ", shift_text("sync_batch"), ", local BatchNorm ", shift_text("batch"), ". (a) ",
                a ? "holds" : "does not hold", ": LayerNorm sends its gradients only; (b) ",
                b ? "holds" : "does not hold", ", at ", bytes_text(sync.statistics_bytes), " of statistics and ",
                sync.step_collectives - layer.step_collectives, " more collectives per step; (c) ",
                c ? "holds" : "does not hold",
                ". SyncBatchNorm's runs are one rank's to the printed digits at every N. LayerNorm's are one "
                "rank's up to the allreduce's summation order (its step losses agree within 5e-6 over the first 20 "
                "steps, docs/distributed.md), but its 5-epoch figures are chaotic in the rounding, as under any "
                "kernel change in one process: each N draws new figures from its spread over seeds, and a shift "
                "near the bound can be that spread rather than a norm that needs synchronizing.")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    if (not_run(records)) return {"Not run: MPI support not built (configure with MPI: docs/distributed.md).\n"};
    return {accuracy_table(records, s) + "\n" + traffic_table(s), {draw_picture(records, s)}};
  }

 private:
  static std::string accuracy_table(const std::vector<Record>& records, const Settings& s) {
    std::vector<std::vector<std::string>> rows;
    for (int n : rank_counts(s)) {
      std::vector<std::string> row{cat(n, " x ", kGlobalBatch / n)};
      for (const Setup& setup : setups()) {
        const RankShift d = shift_at(records, setup.label, n);
        row.push_back(mean_range(figure_at(records, setup.label, n, "val_accuracy")) + " / " +
                      fixed(figure_at(records, setup.label, n, "train_loss").mean) +
                      (n == 1 ? "" : cat(" (", d.shift >= 0 ? "+" : "", fixed(d.shift), d.same() ? "" : ", off", ")")));
      }
      rows.push_back(row);
    }
    std::vector<std::string> header{"ranks x batch each"};
    for (const Setup& setup : setups()) header.push_back(setup.name);
    return "Validation accuracy, mean [min, max] over seeds / mean final training loss (and the accuracy's shift "
           "from one rank; \"off\": outside the rule's bound):\n\n" +
           markdown_table(header, rows);
  }

  static std::string traffic_table(const Settings& s) {
    std::vector<std::vector<std::string>> rows;
    for (const Setup& setup : setups())
      for (int n : rank_counts(s)) {
        if (n == 1 && setup.norm == NormKind::Layer) continue;  // shown by N = 2's row; one rank averages nothing
        const RankTraffic t = rank_traffic(setup.norm, setup.sync_bn, n);
        rows.push_back({setup.name, cat(n), bytes_text(t.gradient_bytes), bytes_text(t.buffer_bytes),
                        bytes_text(t.statistics_bytes), bytes_text(t.bookkeeping_bytes), bytes_text(t.step_bytes()),
                        bytes_text(t.step_bytes() - t.gradient_bytes - t.bookkeeping_bytes), cat(t.step_collectives)});
      }
    return "What a rank hands to the collectives per step (a ring allreduce then sends 2 (N - 1) / N times its "
           "buffer; N = 4 and 8 as N = 2), counted from the model:\n\n" +
           markdown_table({"norm", "ranks", "gradients", "buffers broadcast", "norm statistics", "loss and stop flag",
                           "total", "for the norm", "collectives"},
                          rows);
  }

  static std::string draw_picture(const std::vector<Record>& records, const Settings& s) {
    std::vector<double> ns;
    for (int n : rank_counts(s)) ns.push_back(n);
    std::string script =
        "set logscale x 2\nset xlabel 'ranks (batch 64 / N each)'\nset xrange [0.8:10]\nset key bottom left\n";
    const char* colours[] = {"#1b9e77", "#66a61e", "#d95f02"};
    for (const char* figure : {"val_accuracy", "train_loss"}) {
      std::string plots;
      for (size_t i = 0; i < setups().size(); ++i) {
        const Setup& setup = setups()[i];
        script += series_block(cat(figure, i), where(records, {{"norm", setup.label}}), "ranks", ns, figure);
        plots += cat(i ? ", " : "plot ", "$", figure, i, " using ($1*", 1.0 + 0.04 * double(i),
                     "):2:3:4 with yerrorlines lw 2 lc rgb '", colours[i], "' title '", setup.name, "'");
      }
      script += std::string(figure) == "val_accuracy"
                    ? "set title 'validation accuracy'\nset ylabel 'validation accuracy'\n"
                    : "set title 'final training loss'\nset ylabel 'training loss'\nset key top left\n";
      script += plots + "\n";
    }
    return draw_panels(s.out_dir, "nothing_to_sync.png", "Global batch 64 on N ranks (mean and range over seeds)",
                       script);
  }
};

int64_t bucket_count(const std::vector<Tensor>& parameters) {
  // DistributedDataParallel's rule: last parameter first, a new bucket when the next would pass the cap.
  int64_t buckets = 0, bytes = 0;
  for (size_t i = parameters.size(); i-- > 0;) {
    const int64_t size = parameters[i].numel() * int64_t(sizeof(float));
    if (buckets == 0 || (bytes > 0 && bytes + size > kBucketBytes)) {
      ++buckets;
      bytes = 0;
    }
    bytes += size;
  }
  return buckets;
}

}  // namespace

int64_t RankTraffic::step_bytes() const { return gradient_bytes + buffer_bytes + statistics_bytes + bookkeeping_bytes; }

RankTraffic rank_traffic(NormKind norm, bool sync_bn, int ranks, const lesson::DeepNetOptions& net) {
  const auto model = lesson::deep_net(norm, net);
  const std::vector<Tensor> parameters = model->parameters();
  int64_t parameter_floats = 0, buffer_floats = 0, norm_layers = 0, channels = 0;
  for (const Tensor& p : parameters) parameter_floats += p.numel();
  for (const auto& [name, buffer] : model->named_buffers()) {
    buffer_floats += buffer.numel();
    if (name.ends_with("running_mean")) {
      ++norm_layers;
      channels += buffer.numel();
    }
  }
  RankTraffic t;
  const int64_t buffer_calls = buffer_floats > 0 ? 1 : 0;  // an empty broadcast makes no call
  // Before each step, the stop flag; after the forward, the step's loss: one double each.
  t.bookkeeping_bytes = 2 * int64_t(sizeof(double));
  t.step_collectives = 2;
  // One rank has no gradient to average (DistributedDataParallel skips it).
  if (ranks > 1) {
    t.gradient_bytes = parameter_floats * int64_t(sizeof(float));
    t.step_collectives += bucket_count(parameters);
  }
  // broadcast_buffers: rank 0's running statistics before every training forward.
  t.buffer_bytes = buffer_floats * int64_t(sizeof(float));
  t.step_collectives += buffer_calls;
  if (sync_bn && norm == NormKind::Batch) {
    // Per layer: (count, C means, C M2) gathered forward, (sum dy, sum dy x_hat) summed backward.
    t.statistics_bytes = (norm_layers + 2 * channels + 2 * channels) * int64_t(sizeof(double));
    t.step_collectives += 2 * norm_layers;
  }
  // Once per run: DistributedDataParallel's constructor broadcasts the parameters and the buffers.
  t.setup_bytes = (parameter_floats + buffer_floats) * int64_t(sizeof(float));
  t.setup_collectives = 1 + buffer_calls;
  return t;
}

std::shared_ptr<const Experiment> nothing_to_sync_experiment() { return std::make_shared<NothingToSync>(); }

}  // namespace minidl::lab
