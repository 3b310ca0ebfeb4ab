#include "minidl/io/crc32c.hpp"

#include <array>

namespace minidl::io {

namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78u;

// The CRC of every byte value: one lookup per byte instead of eight shifts.
constexpr std::array<uint32_t, 256> byte_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kReflectedPolynomial : 0u);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = byte_table();

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char c : bytes) crc = (crc >> 8) ^ kTable[(crc ^ uint8_t(c)) & 0xFFu];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

}  // namespace minidl::io
