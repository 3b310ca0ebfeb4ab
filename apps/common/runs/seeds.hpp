#pragma once
// Several seeds of one experiment: the list a user writes and the spread of the figures.
#include <cstdint>
#include <string>
#include <vector>

#include "training/digits_train.hpp"

namespace minidl::lesson {

/// At most this many seeds in one list (each is a training run per norm).
inline constexpr size_t kMaxSeeds = 1000;

/// "0-4" -> 0, 1, 2, 3, 4; "0,3,7" -> 0, 3, 7; ranges and single seeds may mix ("0-2,9").
/// Throws UsageError quoting the list for an empty list or item, an item that is no
/// non-negative integer, a range that runs backwards, a repeated seed, or more than
/// kMaxSeeds seeds.
std::vector<uint64_t> parse_seeds(const std::string& list);

/// "0-4" for 0, 1, 2, 3, 4; "0, 3, 7" otherwise.
std::string seeds_text(const std::vector<uint64_t>& seeds);

/// Mean, sample standard deviation and range of the finite values of a figure over seeds.
struct Spread {
  size_t count = 0;  // the values that went in (runs that finished)
  double mean = 0, sd = 0, min = 0, max = 0;
};
Spread spread_of(const std::vector<double>& values);
/// "2.105 [2.091, 2.120]": the mean [min, max]; `none` when no value went in.
std::string spread_text(const Spread& s, const std::string& none);
/// The text with spaces after it up to `width` characters.
std::string padded(std::string text, size_t width);

/// Per norm (in the order given), the spread of one figure over the runs that finished.
struct NormSpread {
  NormKind norm = NormKind::None;
  size_t runs = 0;  // runs of this norm, finished or not
  Spread train_loss, val_loss, val_accuracy;
  const RunResult* first_seed = nullptr;  // the run of the first seed listed
};
std::vector<NormSpread> spreads_by_norm(const std::vector<RunResult>& results, const std::vector<NormKind>& norms,
                                        const std::vector<uint64_t>& seeds);

/// The table the demo prints: per norm the mean and [min, max] over seeds of the training
/// loss, validation loss and validation accuracy, and the first seed's figures beside them.
std::string seed_table(const std::vector<RunResult>& results, const std::vector<NormKind>& norms,
                       const std::vector<uint64_t>& seeds);

}  // namespace minidl::lesson
