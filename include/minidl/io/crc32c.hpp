#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord frames (record_writer.hpp), and its masked
// form: TensorFlow stores crc32c values rotated and offset, so that a CRC computed over data
// that itself holds CRCs does not degenerate.
#include <cstdint>
#include <string_view>

namespace minidl::io {

/// CRC-32C of bytes: the reflected polynomial 0x82F63B78, initial value and final xor
/// 0xFFFFFFFF ("123456789" gives 0xE3069283).
uint32_t crc32c(std::string_view bytes);

/// TFRecord's mask of a CRC: rotate right by 15 bits, add 0xA282EAD8.
uint32_t mask_crc32c(uint32_t crc);

}  // namespace minidl::io
