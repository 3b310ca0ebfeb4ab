#include "minidl/io/event_encoding.hpp"

#include <bit>

namespace minidl::io {

namespace {

// Wire types of the protobuf encoding.
enum Wire : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

constexpr std::string_view kFileVersion = "brain.Event:2";
constexpr uint64_t kStringDataType = 7;  // DataType DT_STRING (types.proto)

void varint(std::string& out, uint64_t value) {
  for (; value >= 0x80; value >>= 7) out.push_back(char((value & 0x7F) | 0x80));
  out.push_back(char(value));
}

void key(std::string& out, uint32_t field, Wire wire) { varint(out, (uint64_t(field) << 3) | wire); }

void little_endian(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((bits >> (8 * i)) & 0xFF));
}

void field_double(std::string& out, uint32_t field, double value) {
  key(out, field, Fixed64);
  little_endian(out, std::bit_cast<uint64_t>(value), 8);
}

void field_float(std::string& out, uint32_t field, float value) {
  key(out, field, Fixed32);
  little_endian(out, std::bit_cast<uint32_t>(value), 4);
}

void field_varint(std::string& out, uint32_t field, uint64_t value) {  // int64 as two's complement
  key(out, field, Varint);
  varint(out, value);
}

void field_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  key(out, field, LengthDelimited);
  varint(out, bytes.size());
  out += bytes;
}

void field_packed_doubles(std::string& out, uint32_t field, const std::vector<double>& values) {
  std::string packed;
  for (double v : values) little_endian(packed, std::bit_cast<uint64_t>(v), 8);
  field_bytes(out, field, packed);
}

// Event { wall_time, step, summary { value } }.
std::string summary_event(double wall_time, int64_t step, const std::string& value) {
  std::string summary, event;
  field_bytes(summary, 1, value);
  field_double(event, 1, wall_time);
  field_varint(event, 2, uint64_t(step));
  field_bytes(event, 5, summary);
  return event;
}

}  // namespace

std::string file_version_event(double wall_time) {
  std::string event;
  field_double(event, 1, wall_time);
  field_bytes(event, 3, kFileVersion);
  return event;
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string v;
  field_bytes(v, 1, tag);
  field_float(v, 2, value);
  return summary_event(wall_time, step, v);
}

std::string histogram_event(double wall_time, int64_t step, std::string_view tag, const HistogramSummary& h) {
  std::string histo, v;
  field_double(histo, 1, h.min);
  field_double(histo, 2, h.max);
  field_double(histo, 3, h.num);
  field_double(histo, 4, h.sum);
  field_double(histo, 5, h.sum_squares);
  field_packed_doubles(histo, 6, h.bucket_limit);
  field_packed_doubles(histo, 7, h.bucket);
  field_bytes(v, 1, tag);
  field_bytes(v, 5, histo);
  return summary_event(wall_time, step, v);
}

std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text) {
  std::string plugin, metadata, tensor, v;
  field_bytes(plugin, 1, "text");  // PluginData { plugin_name }; its content (version 0) is empty
  field_bytes(metadata, 1, plugin);
  field_varint(tensor, 1, kStringDataType);
  field_bytes(tensor, 2, "");  // TensorShapeProto without dims: a scalar
  field_bytes(tensor, 8, text);
  field_bytes(v, 1, tag);
  field_bytes(v, 8, tensor);
  field_bytes(v, 9, metadata);
  return summary_event(wall_time, step, v);
}

}  // namespace minidl::io
