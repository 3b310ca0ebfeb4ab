#pragma once
// The files the digits program reads and writes, for the checks of output_checks.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "output_checks.hpp"
#include "training/digits_train.hpp"

namespace minidl::digits {

using apps::NamedFile;

/// DIR/<run>.safetensors with one seed, DIR/<run>_seed<S>.safetensors with several.
std::string checkpoint_path(const Settings& s, lesson::NormKind norm, uint64_t seed);

/// The files the settings read: digits.csv and the split files, the batch order, the inits.
std::vector<NamedFile> input_files(const Settings& s);
/// The files the settings write: curves, validation curves, summary, every checkpoint.
std::vector<NamedFile> output_files(const Settings& s);

/// apps::check_outputs on the settings' inputs and outputs.
void check_outputs(const Settings& s);

/// Creates the --save directory (if any) and checks it takes a file (output_checks.hpp).
void prepare_save_directory(const Settings& s);

}  // namespace minidl::digits
