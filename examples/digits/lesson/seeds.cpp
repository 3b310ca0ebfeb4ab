#include "lesson/seeds.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
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
  Spread s;
  double sum = 0.0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    s.min = s.count ? std::min(s.min, v) : v;
    s.max = s.count ? std::max(s.max, v) : v;
    sum += v;
    ++s.count;
  }
  if (s.count == 0) return {0, NAN, NAN, NAN, NAN};
  s.mean = sum / double(s.count);
  double squares = 0.0;
  for (double v : values)
    if (std::isfinite(v)) squares += (v - s.mean) * (v - s.mean);
  s.sd = s.count > 1 ? std::sqrt(squares / double(s.count - 1)) : 0.0;
  return s;
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

std::string cell(const Spread& s) {
  if (s.count == 0) return "no run finished";
  char text[64];
  std::snprintf(text, sizeof text, "%.3f [%.3f, %.3f]", s.mean, s.min, s.max);
  return text;
}

std::string padded(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

}  // namespace

std::string seed_table(const std::vector<RunResult>& results, const std::vector<NormKind>& norms,
                       const std::vector<uint64_t>& seeds) {
  const std::string first = seeds.empty() ? std::string("-") : std::to_string(seeds.front());
  std::string table =
      cat("over seeds ", seeds_text(seeds), ": mean [min, max]; right of the bar, seed ", first, " alone\n");
  table += padded("", 18) + padded("training loss", 23) + padded("validation loss", 23) + padded("val accuracy", 23) +
           "| train loss  val accuracy\n";
  for (const NormSpread& row : spreads_by_norm(results, norms, seeds)) {
    std::string line = padded(display_name(row.norm, results.empty() ? Arch::MLP : results.front().arch), 18) +
                       padded(cell(row.train_loss), 23) + padded(cell(row.val_loss), 23) +
                       padded(cell(row.val_accuracy), 23) + "| ";
    if (row.first_seed && row.first_seed->ok()) {
      char figures[48];
      std::snprintf(figures, sizeof figures, "%.3f       %.3f", double(row.first_seed->train_loss),
                    double(row.first_seed->val_accuracy));
      line += figures;
    } else {
      line += "did not finish";
    }
    if (row.train_loss.count < row.runs)
      line += cat("   (", row.runs - row.train_loss.count, " of ", row.runs, " runs did not finish)");
    table += line + "\n";
  }
  return table;
}

}  // namespace minidl::lesson
