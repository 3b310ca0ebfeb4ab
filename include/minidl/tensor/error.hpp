#pragma once
// Errors thrown by minidl. Every message names what was expected and what came.
#include <sstream>
#include <stdexcept>
#include <string>

namespace minidl {

/// Any failure inside minidl: a shape mismatch, a bad argument, a broken graph.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A problem with what the user handed in (an option, a file): the CLI exits with 2.
struct UsageError : Error {
  using Error::Error;
};

/// Builds a message from any streamable pieces: fail("expected ", a, " got ", b).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace minidl
