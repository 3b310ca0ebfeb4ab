#include "outputs.hpp"

#include <filesystem>

#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::digits {

std::string checkpoint_path(const Settings& s, lesson::NormKind norm, uint64_t seed) {
  const std::string name = lesson::short_name(norm);
  const std::string file = s.seeds.size() == 1 ? name : cat(name, "_seed", seed);
  return (fs::path(s.save_dir) / (file + ".safetensors")).string();
}

std::vector<NamedFile> input_files(const Settings& s) {
  std::vector<NamedFile> inputs;
  for (const char* name : {"digits.csv", "digits_train_indices.txt", "digits_test_indices.txt"})
    inputs.push_back({"--data", (fs::path(s.data_dir) / name).string()});
  if (!s.batch_order.empty()) inputs.push_back({"--batch-order", s.batch_order});
  if (!s.init_from_dir.empty())
    for (lesson::NormKind norm : s.norms)
      inputs.push_back(
          {"--init-from", (fs::path(s.init_from_dir) / (lesson::short_name(norm) + ".safetensors")).string()});
  return inputs;
}

std::vector<NamedFile> output_files(const Settings& s) {
  std::vector<NamedFile> outputs;
  if (!s.curves.empty()) outputs.push_back({"--curves", s.curves});
  if (!s.validation.empty()) outputs.push_back({"--val-curves", s.validation});
  if (!s.summary.empty()) outputs.push_back({"--summary", s.summary});
  if (!s.stats.empty()) outputs.push_back({"--stats", s.stats});
  if (!s.report.empty()) outputs.push_back({"--report", s.report});
  if (!s.save_dir.empty())
    for (lesson::NormKind norm : s.norms)
      for (uint64_t seed : s.seeds) outputs.push_back({"--save", checkpoint_path(s, norm, seed)});
  return outputs;
}

void check_outputs(const Settings& s) { apps::check_outputs(input_files(s), output_files(s), s.save_dir); }

void prepare_save_directory(const Settings& s) { apps::prepare_save_directory(s.save_dir); }

}  // namespace minidl::digits
