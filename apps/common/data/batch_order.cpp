#include "data/batch_order.hpp"

#include "data/text_lines.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::data {

namespace {

std::vector<int64_t> parse_permutation(const detail::TextLines& lines, std::string_view line, int64_t examples) {
  auto words = detail::split_words(line);
  std::vector<int64_t> order;
  order.reserve(words.size());
  std::vector<int64_t> seen_at(size_t(examples), 0);  // column where each index appeared, 0 if not yet
  for (size_t i = 0; i < words.size(); ++i) {
    const auto column = int64_t(i) + 1;
    auto index = detail::parse_integer(words[i]);
    if (!index) lines.fail(column, cat(detail::quoted(words[i]), " is not an integer index"));
    if (*index < 0 || *index >= examples)
      lines.fail(column, cat("index ", *index, " is out of range 0..", examples - 1));
    if (seen_at[size_t(*index)] != 0)
      lines.fail(column, cat("index ", *index, " appears twice (first in column ", seen_at[size_t(*index)],
                             "): each line must be a permutation of 0..", examples - 1));
    seen_at[size_t(*index)] = column;
    order.push_back(*index);
  }
  if (int64_t(order.size()) != examples)
    lines.fail(cat("expected ", examples, " indices (a permutation of 0..", examples - 1, "), got ", order.size()));
  return order;
}

std::vector<std::vector<int64_t>> parse_orders(detail::TextLines lines, int64_t examples, int64_t epochs) {
  std::vector<std::vector<int64_t>> orders;
  while (auto line = lines.next()) {
    if (int64_t(orders.size()) == epochs)
      lines.fail(cat("expected ", epochs, " lines (one per epoch), but the file has more"));
    orders.push_back(parse_permutation(lines, *line, examples));
  }
  if (int64_t(orders.size()) != epochs)
    lines.fail_file(cat("expected ", epochs, " lines (one per epoch), got ", orders.size()));
  return orders;
}

}  // namespace

std::vector<std::vector<int64_t>> read_batch_order(const std::string& path, int64_t examples, int64_t epochs) {
  return parse_orders(detail::TextLines(path), examples, epochs);
}

std::vector<std::vector<int64_t>> parse_batch_order(std::string text, const std::string& name, int64_t examples,
                                                    int64_t epochs) {
  return parse_orders(detail::TextLines(name, std::move(text)), examples, epochs);
}

}  // namespace minidl::data
