#include "trainer_options.hpp"

#include <array>
#include <string>

#include "minidl/tensor/error.hpp"
#include "options.hpp"

namespace minidl::digits {

void add_trainer_options(cxxopts::Options& options) {
  auto text = [] { return cxxopts::value<std::string>(); };
  options.add_options()("optimizer", "sgd, adam or adamw (--lr applies to each)", text()->default_value("sgd"), "NAME")(
      "momentum", "SGD's momentum (default 0; not with adam/adamw)", text(), "M")(
      "weight-decay", "L2 penalty (sgd, adam) or decoupled decay (adamw); default 0, adamw 0.01", text(), "WD")(
      "betas", "Adam's and AdamW's betas (default 0.9,0.999; not with sgd)", text(), "B1,B2")(
      "warmup", "raise the lr linearly from 0.01 lr over the first STEPS steps (LinearLR), then the schedule",
      text()->default_value("0"),
      "STEPS")("schedule", "constant, cosine (down to 0 at the last step, after the warmup) or step (x0.5 every epoch)",
               text()->default_value("constant"),
               "NAME")("clip", "clip the gradients' total L2 norm to NORM before each step", text(), "NORM");
}

namespace {

std::array<double, 2> parse_betas(const std::string& text) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw UsageError(cat("--betas: \"", text, "\" is not two numbers B1,B2 (such as 0.9,0.999)"));
  return {parse_real("--betas", text.substr(0, comma)), parse_real("--betas", text.substr(comma + 1))};
}

}  // namespace

lesson::TrainerSetup parse_trainer_options(const cxxopts::ParseResult& args) {
  auto given = [&](const char* name) { return args.count(name) > 0; };
  auto text = [&](const char* name) { return args[name].as<std::string>(); };
  lesson::TrainerSetup s;
  s.optimizer = lesson::parse_optimizer_kind(text("optimizer"));
  if (given("momentum")) s.momentum = parse_real("--momentum", text("momentum"));
  if (given("weight-decay")) s.weight_decay = parse_real("--weight-decay", text("weight-decay"));
  if (given("betas")) s.betas = parse_betas(text("betas"));
  s.warmup = parse_whole("--warmup", text("warmup"), 0, std::numeric_limits<int64_t>::max());
  s.schedule = lesson::parse_schedule_kind(text("schedule"));
  if (given("clip")) s.clip = parse_real("--clip", text("clip"));
  lesson::check_trainer_setup(s);
  return s;
}

}  // namespace minidl::digits
