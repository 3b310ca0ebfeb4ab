#pragma once
// Writing a file so that a crash never leaves it half-written.
#include <string>
#include <string_view>

namespace minidl::io {

/// Writes bytes to a temporary file in path's directory, fsyncs it, renames it over path
/// and fsyncs the directory: readers see the old file or the complete new one, never a
/// part. Throws minidl::Error naming the path and the system's reason on failure (the
/// temporary file is removed).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace minidl::io
