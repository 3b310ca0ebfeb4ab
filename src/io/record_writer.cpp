#include "minidl/io/record_writer.hpp"

#include <cstdint>

#include "minidl/io/crc32c.hpp"

namespace minidl::io {

namespace {

// value's `bytes` low bytes, least significant first.
void append_little_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((value >> (8 * i)) & 0xFFu));
}

}  // namespace

void append_record(std::string& out, std::string_view data) {
  std::string length;
  append_little_endian(length, data.size(), 8);
  out += length;
  append_little_endian(out, mask_crc32c(crc32c(length)), 4);
  out += data;
  append_little_endian(out, mask_crc32c(crc32c(data)), 4);
}

}  // namespace minidl::io
