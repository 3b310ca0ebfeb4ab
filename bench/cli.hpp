#pragma once
// How a benchmark program ends on bad input, as digits and lab do: one line naming the
// program and what was wrong, then exit code 2 for bad usage (an unknown option, a value
// that is not a number or is out of range) or 1 for a failure while it runs; never an
// uncaught exception.
#include <charconv>
#include <cstdint>
#include <cxxopts.hpp>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "minidl/tensor/error.hpp"

namespace minidl::bench {

/// Runs a program's body: cxxopts' errors and UsageError print "program: what (see program
/// --help)" and give 2, any other exception "program: what" and 1.
template <typename Body>
int run_program(const char* program, Body&& body) {
  const auto usage = [&](const std::exception& e) {
    std::cerr << program << ": " << e.what() << " (see " << program << " --help)" << std::endl;
    return 2;
  };
  try {
    return body();
  } catch (const cxxopts::exceptions::exception& e) {
    return usage(e);
  } catch (const UsageError& e) {
    return usage(e);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << std::endl;
    return 1;
  }
}

/// Parses the command line with `options` and a "help" option of its own. With --help it
/// prints the help and returns nothing: the program then ends with 0.
inline std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& options, int argc, char** argv) {
  options.add_options()("help", "show this help");
  cxxopts::ParseResult args = options.parse(argc, argv);
  if (!args.count("help")) return args;
  std::cout << options.help() << "\n";
  return std::nullopt;
}

/// A numeric option's value, refused (UsageError naming the option and the value) below
/// `least`.
template <typename T>
T at_least(const cxxopts::ParseResult& args, const std::string& option, T least) {
  const T value = args[option].as<T>();  // a value that is not a number failed in parse()
  if (value < least) throw UsageError(cat("--", option, " must be at least ", least, ", got ", value));
  return value;
}

/// `text`, the value given to `option`, as a whole number of at least `least`; UsageError
/// naming both otherwise (for the programs that read their arguments by hand).
inline int64_t whole_number(const std::string& option, const std::string& text, int64_t least) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError(cat(option, ": expected a whole number, got \"", text, "\""));
  if (value < least) throw UsageError(cat(option, " must be at least ", least, ", got ", value));
  return value;
}

}  // namespace minidl::bench
