#pragma once
// The experiments, in report order.
#include <memory>
#include <string>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

const std::vector<std::shared_ptr<const Experiment>>& all_experiments();
/// The experiments named, in the order given ("all" alone: every one); throws UsageError
/// naming an unknown one and the choices, or a name given twice.
std::vector<std::shared_ptr<const Experiment>> select_experiments(const std::vector<std::string>& names);

}  // namespace minidl::lab
