#include "tools.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "minidl/tensor/error.hpp"
#include "runs/run_stats.hpp"
#include "training/lr_trace.hpp"

namespace minidl::lab {

using lesson::NormKind;

std::pair<lesson::RunResult, std::string> trained(const Context& context, const lesson::TrainOptions& options) {
  try {
    lesson::RunResult result = lesson::train_run(context.data, options);
    const std::string status = result.ok() ? "ok" : result.diverged ? "diverged" : "failed";
    return {std::move(result), status};
  } catch (const std::exception&) {
    return {lesson::RunResult{}, "failed"};
  }
}

// The run's curves under a name of its keys ("layer depth=8"), its seeds drawn as one band.
apps::RunLog run_curves(const Context& context, const lesson::TrainOptions& options, const Record& record,
                        const lesson::RunResult& result) {
  std::string name = lesson::short_name(options.norm);
  for (const auto& [key, value] : record.fields) {
    if (key == "norm") break;  // the keys come first
    name += " " + key + "=" +
            (std::holds_alternative<double>(value) ? plain(std::get<double>(value)) : std::get<std::string>(value));
  }
  apps::RunLog log{.name = name, .seed = options.seed};
  const int64_t per_epoch =
      lesson::steps_per_epoch(context.data.X_train.size(0), options.batch_size, options.drop_last);
  const std::vector<double> lrs =
      lesson::lr_trace(options.trainer, options.lr, options.steps ? *options.steps : options.epochs * per_epoch,
                       per_epoch, int64_t(result.curve.size()));
  // A run of 2 x kPagePoints steps or more is drawn at every stride-th step and its last
  // (kPagePoints to twice as many points): a run of batch 1 has thousands, and the page
  // carries every point of every run.
  constexpr size_t kPagePoints = 200;
  const size_t stride = std::max<size_t>(1, result.curve.size() / kPagePoints);
  for (size_t i = 0; i < result.curve.size(); ++i)
    if ((i + 1) % stride == 0 || i + 1 == result.curve.size())
      log.steps.push_back({result.curve[i].step, result.curve[i].loss, lrs[i]});
  for (const lesson::EpochValidation& v : result.validation) log.evals.push_back({v.step, v.loss, v.accuracy});
  return log;
}

Record train_record(const Context& context, const lesson::TrainOptions& options, Record keys) {
  Record record = std::move(keys);
  record.set("norm", lesson::short_name(options.norm));
  record.set("seed", double(options.seed));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto [result, status] = lesson::refusal(options, context.data.X_train.size(0))
                              ? std::pair<lesson::RunResult, std::string>{lesson::RunResult{}, "refused"}
                              : trained(context, options);
  const bool ok = status == "ok";
  record.set("status", status);
  record.set("steps", double(result.curve.size()));
  record.set("train_loss", ok ? double(result.train_loss) : nan);
  record.set("val_loss", ok ? double(result.val_loss) : nan);
  record.set("val_accuracy", ok ? double(result.val_accuracy) : nan);
  record.curves = run_curves(context, options, record, result);
  return record;
}

Job train_job(const Context& context, const lesson::TrainOptions& options, Record keys) {
  const double examples = options.steps ? double(*options.steps * std::min<int64_t>(options.batch_size, 1437))
                                        : double(options.epochs) * 1437.0;
  // Small batches cost more per example (a step's fixed work); deeper nets cost more per example.
  const double per_example = double(options.net.depth) * (1.0 + 8.0 / double(options.batch_size));
  return {examples * per_example,
          [&context, options, keys]() { return std::vector<Record>{train_record(context, options, keys)}; }};
}

void append(std::vector<Job>& jobs, std::vector<Job> more) {
  jobs.insert(jobs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

lesson::TrainOptions lesson_training(const Settings& settings) {
  lesson::TrainOptions options;
  options.epochs = settings.quick ? 1 : 5;
  return options;
}

std::vector<NormKind> all_norms() {
  return {NormKind::None, NormKind::Batch, NormKind::Layer, NormKind::RMS, NormKind::Group};
}

std::vector<Record> where(const std::vector<Record>& records,
                          const std::vector<std::pair<std::string, std::string>>& match) {
  std::vector<Record> out;
  for (const Record& r : records)
    if (std::all_of(match.begin(), match.end(), [&r](const auto& m) { return r.text(m.first) == m.second; }))
      out.push_back(r);
  return out;
}

std::vector<Record> where_num(const std::vector<Record>& records, const std::string& key, double value) {
  std::vector<Record> out;
  for (const Record& r : records)
    if (r.num(key) == value) out.push_back(r);
  return out;
}

std::vector<double> values_of(const std::vector<Record>& records, const std::string& figure) {
  std::vector<double> values;
  for (const Record& r : records) values.push_back(r.num(figure));
  return values;
}

lesson::Spread spread(const std::vector<Record>& records, const std::string& figure) {
  return lesson::spread_of(values_of(records, figure));
}

lesson::Spread spread_counting_failures(const std::vector<Record>& records, const std::string& figure,
                                        double failed_as) {
  return lesson::spread_of(values_counting_failures(records, figure, failed_as));
}

std::vector<double> values_counting_failures(const std::vector<Record>& records, const std::string& figure,
                                             double failed_as) {
  std::vector<double> values;
  for (const Record& r : records) values.push_back(std::isnan(r.num(figure)) ? failed_as : r.num(figure));
  return values;
}

std::vector<double> paired_differences(const std::vector<Record>& a, const std::vector<Record>& b,
                                       const std::string& figure, double failed_as) {
  auto value = [&](const Record& r) { return std::isnan(r.num(figure)) ? failed_as : r.num(figure); };
  std::vector<double> differences;
  for (const Record& first : a) {
    const auto second = where_num(b, "seed", first.num("seed"));
    if (second.size() != 1)
      throw Error(cat("paired_differences: seed ", first.num("seed"), " has ", second.size(),
                      " records on the other side of the comparison, expected 1"));
    differences.push_back(value(first) - value(second.front()));
  }
  if (a.size() != b.size())
    throw Error(cat("paired_differences: ", a.size(), " records against ", b.size(), ", expected one per seed each"));
  return differences;
}

size_t count_status(const std::vector<Record>& records, const std::string& status) {
  return size_t(
      std::count_if(records.begin(), records.end(), [&](const Record& r) { return r.text("status") == status; }));
}

std::string series_block(const std::string& name, const std::vector<Record>& records, const std::string& key,
                         const std::vector<double>& keys, const std::string& figure) {
  std::vector<std::vector<double>> rows;
  for (double k : keys) {
    const lesson::Spread s = spread(where_num(records, key, k), figure);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    rows.push_back({k, s.count ? s.mean : nan, s.count ? s.min : nan, s.count ? s.max : nan});
  }
  return datablock(name, rows);
}

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string mean_range(const lesson::Spread& s, int digits) {
  if (s.count == 0) return "n/a";
  if (s.count == 1) return fixed(s.mean, digits);
  return fixed(s.mean, digits) + " [" + fixed(s.min, digits) + ", " + fixed(s.max, digits) + "]";
}

std::string plain(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string sci(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

std::vector<std::string> grid_header(const std::string& first, const std::string& prefix,
                                     const std::vector<double>& values) {
  std::vector<std::string> header{first};
  for (double v : values) header.push_back(prefix + plain(v));
  return header;
}

std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string table = "|";
  for (const std::string& h : header) table += " " + h + " |";
  table += "\n|";
  for (size_t i = 0; i < header.size(); ++i) table += i == 0 ? " --- |" : " ---: |";
  table += "\n";
  for (const auto& row : rows) {
    table += "|";
    for (const std::string& cell : row) table += " " + cell + " |";
    table += "\n";
  }
  return table;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool gnuplot_available() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

std::string draw(const std::string& out_dir, const std::string& png, const std::string& script) {
  const std::filesystem::path dir(out_dir);
  const std::filesystem::path script_path = dir / (png + ".gp.tmp");
  {
    std::FILE* f = std::fopen(script_path.c_str(), "w");
    if (!f) throw Error(cat("cannot write the gnuplot script ", script_path.string()));
    std::fwrite(script.data(), 1, script.size(), f);
    std::fclose(f);
  }
  const std::string command = "cd '" + dir.string() + "' && gnuplot '" + script_path.filename().string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::filesystem::remove(script_path);
  if (status != 0) throw Error(cat("gnuplot failed drawing ", png, " (exit status ", status, ")"));
  return png;
}

std::string plot_header(const std::string& png, int width, int height) {
  return cat("set terminal pngcairo size ", width, ",", height, " font 'sans,10'\nset output '", png, "'\nset grid\n");
}

namespace {
// The script's opening for `panels` panels side by side under one title.
std::string multiplot(const std::string& png, const std::string& title, int panels, int width, int height) {
  return plot_header(png, width, height) + cat("set multiplot layout 1,", panels, " title \"", title, "\"\n");
}
}  // namespace

std::string two_panels(const std::string& png, const std::string& title, int width, int height) {
  return multiplot(png, title, 2, width, height);
}

std::string draw_plot(const std::string& out_dir, const std::string& png, const std::string& body, int width,
                      int height) {
  return draw(out_dir, png, plot_header(png, width, height) + body);
}

std::string draw_panels(const std::string& out_dir, const std::string& png, const std::string& title,
                        const std::string& body, int panels, int width, int height) {
  return draw(out_dir, png, multiplot(png, title, panels, width, height) + body + "unset multiplot\n");
}

std::string anchor(const std::string& heading) {
  std::string out;
  for (char ch : heading) {
    if (std::isalnum(static_cast<unsigned char>(ch))) out += char(std::tolower(static_cast<unsigned char>(ch)));
    else if (ch == ' ' || ch == '-') out += '-';
    else if (ch == '_') out += '_';
  }
  return out;
}

std::string norm_line(NormKind norm) {
  static const char* const colours[] = {"#555555", "#1b9e77", "#d95f02", "#7570b3",
                                        "#e7298a", "#66a61e", "#e6ab02", "#a6761d"};  // by NormKind
  return cat(" with yerrorlines lw 2 lc rgb '", colours[size_t(norm)], "' title '", lesson::display_name(norm), "'");
}

std::string xtics(const std::vector<std::string>& labels, const std::string& quote) {
  std::string text;
  for (size_t i = 0; i < labels.size(); ++i) text += cat(i ? ", " : "", quote, labels[i], quote, " ", i);
  return text;
}

std::string datablock(const std::string& name, const std::vector<std::vector<double>>& rows) {
  std::string text = "$" + name + " << EOD\n";
  char number[32];
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (std::isnan(row[i])) std::snprintf(number, sizeof number, "%sNaN", i ? " " : "");
      else std::snprintf(number, sizeof number, "%s%.6g", i ? " " : "", row[i]);
      text += number;
    }
    text += "\n";
  }
  return text + "EOD\n";
}

Comparison compare_to_threshold(const std::vector<double>& values, double threshold, double floor) {
  if (!(floor > 0.0)) throw Error(cat("compare_to_threshold: the floor must be positive, got ", floor));
  const lesson::Spread s = lesson::spread_of(values);
  if (s.count == 0) throw Error(cat("compare_to_threshold: no finite value among ", values.size()));
  Comparison c;
  c.mean = s.mean;
  c.margin = std::max(floor, kStandardErrors * s.sd / std::sqrt(double(s.count)));
  c.side = c.mean > threshold + c.margin ? Side::Above : c.mean < threshold - c.margin ? Side::Below : Side::Within;
  return c;
}

std::string margin_rule(const std::string& floors) {
  return cat(" A figure within its margin of a threshold (", kStandardErrors,
             " standard errors of its mean over seeds, at least ", floors,
             "; the floor alone with one seed) is neither above nor below it, and the verdict is \"inconclusive\" "
             "when such a figure decides it.");
}

std::string comparison_text(const Comparison& c, int digits) {
  return fixed(c.mean, digits) + " +- " + fixed(c.margin, digits);
}

Truth above(const Comparison& c) {
  return c.side == Side::Above ? Truth::Yes : c.side == Side::Below ? Truth::No : Truth::Unsure;
}

Truth below(const Comparison& c) { return negation(above(c)); }

Truth negation(Truth t) { return t == Truth::Yes ? Truth::No : t == Truth::No ? Truth::Yes : Truth::Unsure; }

Truth all_of(const std::vector<Truth>& parts) {
  Truth all = Truth::Yes;
  for (Truth t : parts) all = std::min(all, t);  // No < Unsure < Yes
  return all;
}

Truth any_of(const std::vector<Truth>& parts) {
  Truth any = Truth::No;
  for (Truth t : parts) any = std::max(any, t);
  return any;
}

Truth truth_of(bool holds) { return holds ? Truth::Yes : Truth::No; }

std::string exact_rule() {
  return " These figures are exact computations, not training runs: float rounding (about 1e-7) on one side of a "
         "threshold, a visible effect on the other, orders of magnitude apart on every BLAS kernel, so they are "
         "compared without a margin.";
}

std::string truth_text(Truth t, const std::string& yes, const std::string& no) {
  return t == Truth::Yes ? yes : t == Truth::No ? no : "within the margin";
}

Verdict verdict_of(const std::vector<Truth>& parts) {
  if (parts.empty()) throw Error("verdict_of: a rule needs at least one part");
  const auto yes = std::count(parts.begin(), parts.end(), Truth::Yes);
  const auto no = std::count(parts.begin(), parts.end(), Truth::No);
  if (yes == std::ssize(parts)) return Verdict::Held;
  if (no == std::ssize(parts)) return Verdict::DidNotHold;
  if (yes > 0 && no > 0) return Verdict::HeldPartly;
  return Verdict::Inconclusive;
}

Truth greater(const Bounds& a, const Bounds& b) {
  return a.low > b.high ? Truth::Yes : a.high <= b.low ? Truth::No : Truth::Unsure;
}

}  // namespace minidl::lab
