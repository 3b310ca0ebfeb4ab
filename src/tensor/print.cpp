// Printing in PyTorch's style: tensor([[ 1.0000, -2.0000],
//                                       [ 3.0000,  4.0000]])
#include <cmath>
#include <cstdio>
#include <ostream>

#include "minidl/autograd/node.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {
namespace {

bool all_integers(const float* values, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (std::isfinite(values[i]) && values[i] != std::nearbyint(values[i])) return false;
  return true;
}

std::string format_value(float value, bool integers) {
  char buffer[48];
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (integers)
    std::snprintf(buffer, sizeof buffer, "%.0f.", double(value));
  else
    std::snprintf(buffer, sizeof buffer, "%.4f", double(value));
  return buffer;
}

void print_block(std::string& out, const Tensor& t, const std::vector<std::string>& cells, size_t width,
                 size_t dim, int64_t& index, int indent) {
  const Shape& shape = t.shape();
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) {
      out += ',';
      if (dim + 1 == shape.size()) {
        out += ' ';
      } else {
        out += std::string(shape.size() - dim - 1, '\n');
        out += std::string(size_t(indent + int(dim) + 1), ' ');
      }
    }
    if (dim + 1 == shape.size()) {
      const std::string& cell = cells[size_t(index++)];
      out += std::string(width - cell.size(), ' ') + cell;
    } else {
      print_block(out, t, cells, width, dim + 1, index, indent);
    }
  }
  out += ']';
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  const int64_t count = numel();
  bool integers = all_integers(data(), count);
  std::vector<std::string> cells;
  size_t width = 0;
  for (int64_t i = 0; i < count; ++i) {
    cells.push_back(format_value(data()[i], integers));
    width = std::max(width, cells.back().size());
  }
  std::string out = "tensor(";
  if (dim() == 0) {
    out += cells[0];
  } else if (count == 0) {
    out += "[]";
  } else {
    int64_t index = 0;
    print_block(out, *this, cells, width, 0, index, 7);
  }
  if (count == 0 || dim() > 1) out += ", size=" + minidl::to_string(shape());
  if (grad_fn()) out += ", grad_fn=<" + grad_fn()->name + "Backward>";
  else if (requires_grad()) out += ", requires_grad=True";
  return out + ")";
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.to_string(); }

}  // namespace minidl
