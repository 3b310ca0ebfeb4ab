#pragma once
// The digits options of the trainer's tools: --optimizer, --momentum, --weight-decay,
// --betas, --warmup, --schedule, --clip (lesson/trainer_setup.hpp says what each does).
#include <cxxopts.hpp>

#include "lesson/trainer_setup.hpp"

namespace minidl::digits {

void add_trainer_options(cxxopts::Options& options);

/// The setup the command line asks for. Throws UsageError naming the option for a value
/// that is not a number, an unknown optimizer or schedule, or a combination that makes no
/// sense (lesson::check_trainer_setup).
lesson::TrainerSetup parse_trainer_options(const cxxopts::ParseResult& args);

}  // namespace minidl::digits
