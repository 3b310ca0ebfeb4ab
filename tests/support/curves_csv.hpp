#pragma once
// Reads the programs' --curves and --val-curves files back: CSV whose first column names the
// run and whose last holds the figure.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace minidl::testing {

/// run -> the last column of each of its rows, in file order (the header skipped).
inline std::map<std::string, std::vector<double>> read_curves(const std::string& path) {
  std::istringstream in(slurp(path));
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<double>> curves;
  while (std::getline(in, line))
    curves[line.substr(0, line.find(','))].push_back(std::stod(line.substr(line.rfind(',') + 1)));
  return curves;
}

}  // namespace minidl::testing
