#pragma once
// Readable accounts of how two outputs differ, for checks whose failure would otherwise print
// both files whole: a checkpoint's bytes are binary, and a curves file is long. Each returns ""
// when the two are the same, so `CHECK(difference(...) == "")` prints only the account.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "minidl/io/safetensors.hpp"
#include "support/process.hpp"  // slurp

namespace minidl::testing {

/// "" for the same bytes; otherwise both sizes and the first byte (and line) that differs.
inline std::string bytes_difference(const std::string& actual, const std::string& expected) {
  if (actual == expected) return "";
  size_t at = 0;
  while (at < actual.size() && at < expected.size() && actual[at] == expected[at]) ++at;
  std::ostringstream out;
  out << actual.size() << " bytes against the expected " << expected.size() << ", first different at byte " << at;
  const size_t line_start = expected.rfind('\n', at == 0 ? 0 : at - 1);
  const size_t begin = line_start == std::string::npos || at == 0 ? 0 : line_start + 1;
  auto line_at = [&](const std::string& s) { return s.substr(begin, s.find('\n', begin) - begin).substr(0, 120); };
  const std::string got = line_at(actual), want = line_at(expected);
  auto printable = [](const std::string& line) {
    return std::all_of(line.begin(), line.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
  };
  if (printable(got) && printable(want))  // text: show the lines; binary bytes are left out
    out << " (line " << std::count(expected.begin(), expected.begin() + long(begin), '\n') + 1 << ": \"" << got
        << "\" against \"" << want << "\")";
  return out.str();
}

/// "" when the CSV text `actual` has `expected`'s lines, the last field of each (a value such
/// as a loss) within `tolerance` of the expected one and every other field the same;
/// otherwise the first line that is not.
inline std::string csv_difference(const std::string& actual, const std::string& expected, double tolerance) {
  std::istringstream a(actual), e(expected);
  std::string got, want;
  for (int line = 1;; ++line) {
    const bool more_got = bool(std::getline(a, got)), more_want = bool(std::getline(e, want));
    if (!more_got && !more_want) return "";
    const size_t cut_got = got.rfind(','), cut_want = want.rfind(',');
    bool same = more_got && more_want && got.substr(0, cut_got + 1) == want.substr(0, cut_want + 1);
    if (same && got != want) {
      char* end_got = nullptr;
      char* end_want = nullptr;
      const double x = std::strtod(got.c_str() + cut_got + 1, &end_got);
      const double y = std::strtod(want.c_str() + cut_want + 1, &end_want);
      same = *end_got == '\0' && *end_want == '\0' && std::abs(x - y) <= tolerance;
    }
    if (!same)
      return cat("line ", line, " is \"", more_got ? got : "(none: the file ends)", "\" against \"",
                 more_want ? want : "(none: the expected file ends)", "\"");
  }
}

/// "" when the safetensors file at actual_path holds what the one at expected_path does: the
/// same bytes, or with `tolerance` > 0 the same entries and shapes with every value within
/// it. Otherwise which entries differ and by how much (or why a file does not load), never
/// the bytes themselves.
inline std::string checkpoint_difference(const std::string& actual_path, const std::string& expected_path,
                                         double tolerance = 0.0) {
  const std::string actual_bytes = slurp(actual_path), expected_bytes = slurp(expected_path);
  if (actual_bytes == expected_bytes) return "";
  std::ostringstream out;
  out << actual_path << " (" << actual_bytes.size() << " bytes) differs from " << expected_path << " ("
      << expected_bytes.size() << " bytes)";
  nn::StateDict actual, expected;
  try {
    actual = io::load_safetensors(actual_path);
    expected = io::load_safetensors(expected_path);
  } catch (const std::exception& e) {
    return out.str() + ": " + e.what();
  }
  if (actual.size() != expected.size()) {
    out << ": " << actual.size() << " entries against " << expected.size();
    return out.str();
  }
  bool within = true;
  for (size_t i = 0; i < actual.size(); ++i) {
    const Tensor& a = actual[i].value;
    const Tensor& e = expected[i].value;
    if (actual[i].name != expected[i].name || a.shape() != e.shape()) {
      out << "; entry " << i << " is " << actual[i].name << " " << to_string(a.shape()) << " against "
          << expected[i].name << " " << to_string(e.shape());
      within = false;
      continue;
    }
    int64_t differing = 0, first = -1;
    double worst = 0.0;
    for (int64_t k = 0; k < a.numel(); ++k) {
      const float x = a.data()[k], y = e.data()[k];
      if (std::abs(double(x) - double(y)) <= tolerance || (std::isnan(x) && std::isnan(y))) continue;
      if (differing++ == 0) first = k;
      worst = std::max(worst, std::abs(double(x) - double(y)));
    }
    within = within && differing == 0;
    if (differing > 0)
      out << "; " << actual[i].name << ": " << differing << " of " << a.numel() << " values differ, the first at "
          << first << " (" << a.data()[first] << " against " << e.data()[first] << "), at most by " << worst;
  }
  return within && tolerance > 0.0 ? "" : out.str();
}

}  // namespace minidl::testing
