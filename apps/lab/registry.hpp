#pragma once
// The experiments, in chapters, in report order.
#include <memory>
#include <string>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

/// A part of the report: a heading and its experiments, in report order.
struct Chapter {
  std::string title;
  std::vector<std::shared_ptr<const Experiment>> experiments;
};
const std::vector<Chapter>& chapters();
/// Every chapter's experiments in report order: experiment k of this list is numbered k + 1.
const std::vector<std::shared_ptr<const Experiment>>& all_experiments();
/// The experiments named, in the order given ("all" alone: every one); throws UsageError
/// naming an unknown one and the choices, or a name given twice.
std::vector<std::shared_ptr<const Experiment>> select_experiments(const std::vector<std::string>& names);

}  // namespace minidl::lab
