#include "runs/seeds.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <numeric>
#include <set>

#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

namespace {

uint64_t parse_seed(const std::string& list, const std::string& item) {
  uint64_t value = 0;
  const char* end = item.data() + item.size();
  auto [stop, error] = std::from_chars(item.data(), end, value);
  if (item.empty() || error != std::errc() || stop != end)
    throw UsageError(cat("--seeds \"", list, "\": \"", item,
                         "\" is not a seed (expected a non-negative integer or a range such as 0-4)"));
  return value;
}

}  // namespace

std::vector<uint64_t> parse_seeds(const std::string& list) {
  if (list.empty()) throw UsageError("--seeds is empty: give seeds such as 0-4 or 0,3,7");
  std::vector<uint64_t> seeds;
  std::set<uint64_t> seen;
  auto add = [&](uint64_t seed) {
    if (!seen.insert(seed).second) throw UsageError(cat("--seeds \"", list, "\": seed ", seed, " is listed twice"));
    if (seeds.size() == kMaxSeeds) throw UsageError(cat("--seeds \"", list, "\": more than ", kMaxSeeds, " seeds"));
    seeds.push_back(seed);
  };
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      add(parse_seed(list, item));
    } else {
      const uint64_t first = parse_seed(list, item.substr(0, dash)), last = parse_seed(list, item.substr(dash + 1));
      if (last < first)
        throw UsageError(
            cat("--seeds \"", list, "\": the range ", item, " runs backwards (write ", last, "-", first, ")"));
      if (last - first >= kMaxSeeds) throw UsageError(cat("--seeds \"", list, "\": more than ", kMaxSeeds, " seeds"));
      for (uint64_t seed = first;; ++seed) {
        add(seed);
        if (seed == last) break;
      }
    }
    start = comma + 1;
  }
  return seeds;
}

std::string seeds_text(const std::vector<uint64_t>& seeds) {
  bool consecutive = seeds.size() > 2;
  for (size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[i - 1] + 1;
  if (consecutive) return cat(seeds.front(), "-", seeds.back());
  std::string text;
  for (uint64_t seed : seeds) text += (text.empty() ? "" : ", ") + std::to_string(seed);
  return text;
}

Spread spread_of(const std::vector<double>& values) {
  std::vector<double> finite;
  std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](double v) { return std::isfinite(v); });
  if (finite.empty()) return {0, NAN, NAN, NAN, NAN};
  Spread s{.count = finite.size(),
           .min = *std::min_element(finite.begin(), finite.end()),
           .max = *std::max_element(finite.begin(), finite.end())};
  s.mean = std::accumulate(finite.begin(), finite.end(), 0.0) / double(s.count);
  double squares = 0.0;
  for (double v : finite) squares += (v - s.mean) * (v - s.mean);
  s.sd = s.count > 1 ? std::sqrt(squares / double(s.count - 1)) : 0.0;
  return s;
}

std::string spread_text(const Spread& s, const std::string& none) {
  if (s.count == 0) return none;
  return cat(figure_text(s.mean), " [", figure_text(s.min), ", ", figure_text(s.max), "]");
}

std::string padded(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::vector<NormSpread> spreads_by_norm(const std::vector<RunResult>& results, const std::vector<NormKind>& norms,
                                        const std::vector<uint64_t>& seeds) {
  std::vector<NormSpread> table;
  for (NormKind norm : norms) {
    NormSpread row;
    row.norm = norm;
    std::vector<double> train, val, accuracy;
    for (const RunResult& r : results) {
      if (r.norm != norm) continue;
      ++row.runs;
      if (!seeds.empty() && r.seed == seeds.front()) row.first_seed = &r;
      if (!r.ok()) continue;
      train.push_back(r.train_loss);
      val.push_back(r.val_loss);
      accuracy.push_back(r.val_accuracy);
    }
    row.train_loss = spread_of(train);
    row.val_loss = spread_of(val);
    row.val_accuracy = spread_of(accuracy);
    table.push_back(row);
  }
  return table;
}

namespace {

// The three figure columns of a norm's row: training loss, validation loss, val accuracy.
using FigureCells = std::array<std::string, 3>;

// Each column as wide as the usual figures need, wider when one is out of the usual range
// (a loss of 3e+31), so columns never run together.
std::array<size_t, 3> column_widths(const std::vector<FigureCells>& rows) {
  std::array<size_t, 3> widths{23, 23, 23};
  for (const FigureCells& cells : rows)
    for (size_t c = 0; c < cells.size(); ++c) widths[c] = std::max(widths[c], cells[c].size() + 2);
  return widths;
}

std::string first_seed_figures(const RunResult* run) {
  if (!run || !run->ok()) return "did not finish";
  return padded(figure_text(run->train_loss), 11) + " " + figure_text(run->val_accuracy);
}

}  // namespace

std::string seed_table(const std::vector<RunResult>& results, const std::vector<NormKind>& norms,
                       const std::vector<uint64_t>& seeds) {
  const std::vector<NormSpread> spreads = spreads_by_norm(results, norms, seeds);
  const std::string none = "no run finished";
  std::vector<FigureCells> cells;
  for (const NormSpread& row : spreads)
    cells.push_back(
        {spread_text(row.train_loss, none), spread_text(row.val_loss, none), spread_text(row.val_accuracy, none)});
  const std::array<size_t, 3> widths = column_widths(cells);
  const std::string first = seeds.empty() ? std::string("-") : std::to_string(seeds.front());
  std::string table =
      cat("over seeds ", seeds_text(seeds), ": mean [min, max]; right of the bar, seed ", first, " alone\n");
  table += padded("", 18) + padded("training loss", widths[0]) + padded("validation loss", widths[1]) +
           padded("val accuracy", widths[2]) + "| train loss  val accuracy\n";
  for (size_t r = 0; r < spreads.size(); ++r) {
    const NormSpread& row = spreads[r];
    std::string line = padded(display_name(row.norm, results.empty() ? Arch::MLP : results.front().arch), 18);
    for (size_t c = 0; c < widths.size(); ++c) line += padded(cells[r][c], widths[c]);
    line += "| " + first_seed_figures(row.first_seed);
    if (row.train_loss.count < row.runs)
      line += cat("   (", row.runs - row.train_loss.count, " of ", row.runs, " runs did not finish)");
    table += line + "\n";
  }
  return table;
}

}  // namespace minidl::lesson
