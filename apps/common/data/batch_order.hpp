#pragma once
// Batch-order files: the order in which a run made elsewhere visited the training
// examples, so that this framework can replay it batch for batch.
#include <cstdint>
#include <string>
#include <vector>

namespace minidl::data {

/// Reads one line per epoch, each a permutation of 0..examples-1 (indices separated by
/// commas or spaces). The file must hold exactly `epochs` lines. Throws UsageError naming
/// the file, line and column of the first problem: a value that is no integer, one out of
/// range, one seen twice in a line, a line of the wrong length, the wrong number of lines.
std::vector<std::vector<int64_t>> read_batch_order(const std::string& path, int64_t examples, int64_t epochs);
/// read_batch_order on text in memory; `name` stands for the file in messages.
std::vector<std::vector<int64_t>> parse_batch_order(std::string text, const std::string& name, int64_t examples,
                                                    int64_t epochs);

}  // namespace minidl::data
