#pragma once
// The digits program's "Model" options: --arch, --blocks, --expansion, --dropout, --init and
// --summary-model, and the refusal of combinations that make no sense (UsageError: exit 2).
#include <cxxopts.hpp>

#include "options.hpp"

namespace minidl::digits {

/// Adds the options group "Model" to the command line.
void add_model_options(cxxopts::Options& options);

/// Fills s.train.model and s.summary_model from the parsed line and refuses nonsense: --blocks,
/// --expansion or --dropout without a resmlp arch, --depth or --groups with one, a resmlp arch
/// with a norm other than layer or rms (its default --norm is layer), --init xavier or
/// kaiming with --init-from. Call it after the other options are read (it reads s.norms).
void read_model_options(const cxxopts::ParseResult& args, Settings& s);

}  // namespace minidl::digits
