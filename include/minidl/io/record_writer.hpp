#pragma once
// TFRecord framing, the container of TensorBoard's event files: each record is
//   uint64 length | uint32 masked crc32c(length) | data | uint32 masked crc32c(data)
// with the integers little-endian (crc32c.hpp has the mask). A reader checks both CRCs, so a
// flipped byte anywhere in a record is caught.
#include <string>
#include <string_view>

namespace minidl::io {

/// Appends data as one framed record to out.
void append_record(std::string& out, std::string_view data);

}  // namespace minidl::io
