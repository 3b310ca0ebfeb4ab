#include "minidl/nn/summary.hpp"

#include <string>

namespace minidl::nn {
namespace {

constexpr size_t kLabelWidth = 45;  // the layer column; the count is right-aligned after it
constexpr size_t kCountWidth = 15;

int64_t count(const NamedTensors& tensors) {
  int64_t n = 0;
  for (const auto& entry : tensors) n += entry.second.numel();
  return n;
}

// 1234567 -> "1,234,567", as torchinfo prints counts.
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Counts characters, not bytes: the tree glyphs are 3 bytes each in UTF-8.
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string row(const std::string& label, const std::string& count_text) {
  const size_t used = display_width(label) + count_text.size();
  const size_t pad = used < kLabelWidth + kCountWidth ? kLabelWidth + kCountWidth - used : 1;
  return label + std::string(pad, ' ') + count_text + "\n";
}

void add_rows(const Module& module, const std::string& label, int depth, std::string& out) {
  const int64_t own = own_parameter_count(module);
  out += row(label, own > 0 ? with_commas(own) : "--");
  for (const auto& [name, child] : module.named_children()) {
    std::string indent;
    for (int d = 0; d < depth; ++d) indent += "│    ";
    add_rows(*child, indent + (depth == 0 ? "├─" : "└─") + name + " (" + child->type_name() + ")", depth + 1, out);
  }
}

}  // namespace

int64_t own_parameter_count(const Module& module) {
  int64_t n = count(module.named_parameters());
  for (const auto& child : module.named_children()) n -= count(child.second->named_parameters());
  return n;
}

std::string summary(const Module& model) {
  const std::string rule = std::string(kLabelWidth + kCountWidth, '=') + "\n";
  std::string out = rule + row("Layer (type)", "Param #") + rule;
  add_rows(model, model.type_name(), 0, out);
  int64_t total = 0, trainable = 0;
  for (const auto& entry : model.named_parameters()) {
    total += entry.second.numel();
    if (entry.second.requires_grad()) trainable += entry.second.numel();
  }
  out += rule;
  out += "Total params: " + with_commas(total) + "\n";
  out += "Trainable params: " + with_commas(trainable) + "\n";
  out += "Non-trainable params: " + with_commas(total - trainable) + "\n";
  return out + rule;
}

}  // namespace minidl::nn
