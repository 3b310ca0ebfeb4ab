// Test helper for test_kill_mid_write.cpp: saves a checkpoint and a curves file over and
// over, as a training run does, until it is killed. Each generation g writes
//   DIR/model.safetensors: "weight" (256, 256) all equal to g, "generation" (I64) = g
//   DIR/curves.csv: the header, then 100 + g % 100 rows "loop,g,k,k" for k = 0, 1, ...
// so a reader can tell a whole file (every value from one generation, every row there)
// from a torn one. It resumes from the generation it finds in DIR, so generations only
// grow across restarts.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "minidl/io/atomic_file.hpp"
#include "minidl/io/safetensors.hpp"

using namespace minidl;

namespace {

int64_t resume_generation(const std::filesystem::path& checkpoint) {
  if (!std::filesystem::exists(checkpoint)) return 0;
  for (const nn::StateEntry& entry : io::load_safetensors(checkpoint.string()))
    if (entry.name == "generation") return int64_t(entry.value.data()[0]) + 1;
  return 0;
}

std::string curves(int64_t generation) {
  std::string text = "run,epoch,step,loss\n";
  for (int64_t k = 0; k < 100 + generation % 100; ++k)
    text += "loop," + std::to_string(generation) + "," + std::to_string(k) + "," + std::to_string(k) + "\n";
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: save_loop DIR GENERATIONS\n");
    return 2;
  }
  try {
    const std::filesystem::path dir(argv[1]);
    const int64_t stop = std::stoll(argv[2]);
    const auto checkpoint = dir / "model.safetensors";
    for (int64_t g = resume_generation(checkpoint); g < stop; ++g) {
      nn::StateDict state{{"weight", Tensor::full({256, 256}, float(g)), DType::F32},
                          {"generation", Tensor::scalar(float(g)), DType::I64}};
      io::save_safetensors(checkpoint.string(), state);
      io::write_file_atomically((dir / "curves.csv").string(), curves(g));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "save_loop: %s\n", e.what());
    return 1;
  }
  return 0;
}
