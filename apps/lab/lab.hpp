#pragma once
// The lab: each claim of the lesson as an experiment. An experiment plans jobs (training runs
// or exact checks), the runner executes every job of every experiment on the cores, and the
// experiment then judges its records: a table, pictures and a verdict by a rule it states
// before the numbers. Experiments live one per file in experiments/ and are listed in
// registry.cpp, so a new one touches no other.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "data/digits.hpp"
#include "data/words.hpp"
#include "run_log.hpp"

namespace minidl::lab {

struct Settings {
  std::vector<uint64_t> seeds{0, 1, 2, 3, 4};
  bool quick = false;  // one seed, small grids, short training: what CI runs
  std::string out_dir;
  std::string data_dir;
  int jobs = 1;
};

/// One row of an experiment's CSV: named fields, text or numbers, in column order.
struct Record {
  using Value = std::variant<std::string, double>;
  std::vector<std::pair<std::string, Value>> fields;
  /// A training run's curves (train_record), for the experiment's page; not in the CSV.
  std::optional<apps::RunLog> curves{};

  Record() = default;
  /// The fields in column order: Record{{"norm", "layer"}, {"seed", 0.0}}.
  Record(std::initializer_list<std::pair<std::string, Value>> fields) : fields(fields) {}
  Record& set(const std::string& name, Value value);
  /// The number or text named; throws naming the field when it is missing or of the other kind.
  double num(const std::string& name) const;
  const std::string& text(const std::string& name) const;
};

/// The CSV of records: the first record's field names as the header, numbers with 9
/// significant digits (exact for float), text as is (fields never hold commas).
std::string records_csv(const std::vector<Record>& records);

/// A unit of work. Jobs of one experiment share nothing mutable, so they run in any order on
/// any thread with the same records.
struct Job {
  double cost = 1.0;  // relative, for scheduling the longest first
  std::function<std::vector<Record>()> run;
};

// Inconclusive: a figure the rule compares sits within its margin of a threshold, and the
// verdict would differ on either side. NotRun: what the experiment needs is missing from this
// build (it says what in Decision::why).
enum class Verdict { Held, HeldPartly, DidNotHold, Inconclusive, NotRun };
// "held", "held partly", "did not hold", "inconclusive", "not run"
std::string verdict_text(Verdict verdict);

/// The verdict and the figures the rule looked at: a function of the records alone.
struct Decision {
  Verdict verdict = Verdict::DidNotHold;
  std::string why;
};

/// What an experiment shows of its records.
struct Description {
  std::string table;                    // Markdown
  std::vector<std::string> pictures{};  // PNG file names in the output directory
};

/// What an experiment concludes from its records.
struct Outcome {
  Description description;
  Decision decision;
};

/// What experiments see: the settings, the lesson's digits and charlm's words.
struct Context {
  const Settings& settings;
  const data::DigitsSplit& data;
  const charlm::WordSplit& words;
};

/// Who an experiment is: what the report and `lab list` say of it before any set-up.
struct About {
  std::string name;    // on the command line and in file names
  std::string title;   // the report's heading
  std::string claim;   // the lesson's claim, paraphrased
  std::string source;  // which lesson text makes it
};

class Experiment {
 public:
  explicit Experiment(About about) : about_(std::move(about)) {}
  virtual ~Experiment() = default;
  const std::string& name() const { return about_.name; }
  const std::string& title() const { return about_.title; }
  const std::string& claim() const { return about_.claim; }
  const std::string& source() const { return about_.source; }
  virtual std::string setup(const Settings& settings) const = 0;
  virtual std::string rule() const = 0;  // how the verdict is computed, stated before the numbers
  virtual std::vector<Job> plan(const Context& context) const = 0;
  /// The seeds its runs use (the report names them): all of --seeds unless the grid is too large.
  virtual std::vector<uint64_t> seeds_used(const Settings& settings) const { return settings.seeds; }
  /// The verdict by rule() from the records of all jobs (in plan order); draws nothing, so the
  /// tests judge constructed records with it.
  virtual Decision decide(const std::vector<Record>& records, const Settings& settings) const = 0;
  /// The table and pictures of the records (pictures drawn into settings.out_dir).
  virtual Description describe(const std::vector<Record>& records, const Settings& settings) const = 0;
  /// describe() and decide() together.
  Outcome judge(const std::vector<Record>& records, const Settings& settings) const {
    return {describe(records, settings), decide(records, settings)};
  }

 private:
  About about_;
};

// ---- the runner (runner.cpp) ----
// Runs jobs on several threads with the results of one by one: each job owns its generators,
// and its records land in its own slot.

/// Called after each job with the jobs done so far, the total, and the fraction of the total
/// cost done (what an estimate of the time left should use: jobs run costliest first).
using Progress = std::function<void(size_t done, size_t total, double cost_done)>;

/// Runs every job, up to `workers` at once (each thread with one OpenMP/OpenBLAS thread when
/// workers > 1), the costliest first; returns each job's records at its index. A job that
/// throws rethrows here after all have finished.
std::vector<std::vector<Record>> run_jobs(const std::vector<Job>& jobs, int workers, const Progress& progress = {});

}  // namespace minidl::lab
