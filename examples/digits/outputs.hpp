#pragma once
// Where the digits program writes, checked before anything trains: every output in a
// directory that exists and takes a write, none of them an input or another output.
#include <cstdint>
#include <string>
#include <vector>

#include "lesson/train_run.hpp"
#include "options.hpp"

namespace minidl::digits {

/// A file the program reads or writes, and the option (or "--data") it came from.
struct NamedFile {
  std::string option;
  std::string path;
};

/// DIR/<run>.safetensors with one seed, DIR/<run>_seed<S>.safetensors with several.
std::string checkpoint_path(const Settings& s, lesson::NormKind norm, uint64_t seed);

/// The files the settings read: digits.csv and the split files, the batch order, the inits.
std::vector<NamedFile> input_files(const Settings& s);
/// The files the settings write: curves, validation curves, summary, every checkpoint.
std::vector<NamedFile> output_files(const Settings& s);

/// Throws UsageError naming the option and the path when an output is an input or another
/// output (same resolved path or same file), is a directory, has a name too long for its
/// filesystem, or lies in a directory that does not exist or takes no new file. Creates
/// nothing: call it before reading the inputs.
void check_outputs(const Settings& s);

/// Creates the --save directory (if any) and checks it takes a file; throws UsageError
/// naming it otherwise. The last check before training, so a refusal creates nothing.
void prepare_save_directory(const Settings& s);

}  // namespace minidl::digits
