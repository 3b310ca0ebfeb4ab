// Printing in PyTorch's style (a port of torch/_tensor_str.py with its default options:
// precision 4, threshold 1000, edgeitems 3, linewidth 80):
//   tensor([[ 1.5000, -2.0000],
//           [ 3.0000,  4.2500]], grad_fn=<MulBackward0>)
#include <cmath>
#include <cstdio>
#include <ostream>

#include "minidl/autograd/node.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {
namespace {

constexpr int64_t kThreshold = 1000;  // more elements than this: summarize with "..."
constexpr int64_t kEdgeItems = 3;     // kept at each end of a summarized dim
constexpr size_t kLineWidth = 80;

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Indices kept along a dim of this extent: all, or the first and last kEdgeItems.
std::vector<int64_t> shown_indices(int64_t extent, bool summarize) {
  std::vector<int64_t> kept;
  const bool cut = summarize && extent > 2 * kEdgeItems;
  for (int64_t i = 0; i < extent; ++i)
    if (!cut || i < kEdgeItems || i >= extent - kEdgeItems) kept.push_back(i);
  return kept;
}

// Every value that will be printed (the summarized data when summarizing).
void gather_shown(const float* data, const Shape& shape, size_t dim, bool summarize, std::vector<float>& out) {
  if (dim == shape.size()) {
    out.push_back(*data);
    return;
  }
  const int64_t stride = numel(Shape(shape.begin() + int64_t(dim) + 1, shape.end()));
  for (int64_t i : shown_indices(shape[dim], summarize))
    gather_shown(data + i * stride, shape, dim + 1, summarize, out);
}

// Chooses fixed, integer or scientific notation and one width for all values, as
// PyTorch's _Formatter does from the nonzero finite values.
class Formatter {
 public:
  explicit Formatter(const std::vector<float>& values) {
    double lo = INFINITY, hi = 0.0;
    for (float v : values) {
      if (!std::isfinite(v) || v == 0.0f) continue;
      lo = std::min(lo, std::abs(double(v)));
      hi = std::max(hi, std::abs(double(v)));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (hi == 0.0) return;  // no nonzero finite value
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (float v : values)
      if (std::isfinite(v) && v != 0.0f) width_ = std::max(width_, plain(v).size() + (int_mode_ && !sci_mode_));
  }

  std::string format(float value) const {
    std::string text = plain(value);
    if (int_mode_ && !sci_mode_ && std::isfinite(value)) text += '.';
    return std::string(width_ > text.size() ? width_ - text.size() : 0, ' ') + text;
  }
  size_t width() const { return width_; }

 private:
  std::string plain(float value) const {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    if (sci_mode_) return printf_string("%.4e", double(value));
    return printf_string(int_mode_ ? "%.0f" : "%.4f", double(value));
  }
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? separator : "") + parts[i];
  return out;
}

// "," then the line breaks and the indent of the next row.
std::string separator(size_t newlines, size_t indent) {
  std::string out(1, ',');
  out.append(newlines, '\n');
  out.append(indent, ' ');
  return out;
}

std::string bracketed(const std::string& inner) { return "[" + inner + "]"; }

// One row: as many elements per line as fit in the line width.
std::string vector_string(const float* data, int64_t extent, size_t indent, bool summarize, const Formatter& f) {
  std::vector<std::string> cells;
  const bool cut = summarize && extent > 2 * kEdgeItems;
  for (int64_t i : shown_indices(extent, summarize)) {
    if (cut && i == extent - kEdgeItems) cells.push_back(" ...");
    cells.push_back(f.format(data[i]));
  }
  const size_t element_length = f.width() + 2;
  const size_t per_line = std::max<size_t>(1, (kLineWidth - std::min(indent, kLineWidth)) / element_length);
  std::vector<std::string> lines;
  for (size_t i = 0; i < cells.size(); i += per_line)
    lines.push_back(
        join({cells.begin() + int64_t(i), cells.begin() + int64_t(std::min(cells.size(), i + per_line))}, ", "));
  return bracketed(join(lines, separator(1, indent + 1)));
}

std::string block_string(const float* data, const Shape& shape, size_t dim, size_t indent, bool summarize,
                         const Formatter& f) {
  const size_t rank_left = shape.size() - dim;
  if (rank_left == 1) return vector_string(data, shape[dim], indent, summarize, f);
  const int64_t stride = numel(Shape(shape.begin() + int64_t(dim) + 1, shape.end()));
  const bool cut = summarize && shape[dim] > 2 * kEdgeItems;
  std::vector<std::string> slices;
  for (int64_t i : shown_indices(shape[dim], summarize)) {
    if (cut && i == shape[dim] - kEdgeItems) slices.push_back("...");
    slices.push_back(block_string(data + i * stride, shape, dim + 1, indent + 1, summarize, f));
  }
  return bracketed(join(slices, separator(rank_left - 1, indent + 1)));
}

std::string tuple_string(const Shape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Appends ", suffix" or, when the line would pass the width, ",\n<indent>suffix".
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, size_t indent) {
  const size_t newline = text.rfind('\n');
  size_t last_line = newline == std::string::npos ? text.size() + 2 : text.size() - newline + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line + suffix.size() + 2 > kLineWidth) {
      text += separator(1, indent);
      text += suffix;
      last_line = indent + suffix.size();
    } else {
      text += ", " + suffix;
      last_line += suffix.size() + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const size_t indent = prefix.size();
  std::vector<std::string> suffixes;
  std::string body;
  if (numel() == 0) {
    if (dim() != 1) suffixes.push_back(std::string("size=").append(tuple_string(shape())));
    body = "[]";
  } else {
    const bool summarize = numel() > kThreshold;
    std::vector<float> shown;
    gather_shown(data(), shape(), 0, summarize, shown);
    const Formatter formatter(shown);
    body = dim() == 0 ? formatter.format(data()[0]) : block_string(data(), shape(), 0, indent, summarize, formatter);
  }
  if (grad_fn()) suffixes.push_back(std::string("grad_fn=<").append(grad_fn()->name).append("Backward0>"));
  else if (requires_grad()) suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.to_string(); }

}  // namespace minidl
