#include "cli.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "runs/seeds.hpp"

namespace minidl::apps {

int64_t parse_whole(const std::string& option, const std::string& text, int64_t low, int64_t high) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool decimal = !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
  if (!decimal || stop != end || (error != std::errc() && error != std::errc::result_out_of_range))
    throw UsageError(
        cat(option, ": \"", text, "\" is not a whole number (expected a decimal integer, at least ", low, ")"));
  if ((error == std::errc::result_out_of_range && text.front() == '-') || (error == std::errc() && value < low))
    throw UsageError(cat(option, " must be at least ", low, ", got ", text));
  if (error == std::errc::result_out_of_range || value > high)
    throw UsageError(cat(option, " must be at most ", high, ", got ", text));
  return value;
}

double parse_real(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || error != std::errc() || stop != end)
    throw UsageError(cat(option, ": \"", text, "\" is not a number"));
  return value;
}

cxxopts::Options declare_options(const std::string& program, const std::string& description,
                                 std::span<const OptionSpec> specs) {
  cxxopts::Options options(program, description);
  options.set_width(100);
  for (const OptionSpec& d : specs) {
    if (!d.value_name) {
      options.add_options(d.group)(d.name, d.help);
      continue;
    }
    auto value = cxxopts::value<std::string>();
    if (d.default_value) value->default_value(d.default_value);
    options.add_options(d.group)(d.name, d.help, value, d.value_name);
  }
  return options;
}

CommandLine::CommandLine(cxxopts::Options& options, int argc, char** argv) : args_(options.parse(argc, argv)) {
  if (given("help")) return;
  if (!args_.unmatched().empty()) throw UsageError(cat("unexpected argument \"", args_.unmatched()[0], "\""));
  for (const cxxopts::KeyValue& kv : args_.arguments())
    if (args_.count(kv.key()) > 1) throw UsageError(cat("--", kv.key(), " is given more than once: give it once"));
}

std::string CommandLine::text(const char* name) const {
  return given(name) || args_[name].has_default() ? args_[name].as<std::string>() : std::string();
}

int64_t CommandLine::whole(const char* name, int64_t low, int64_t high) const {
  return parse_whole(cat("--", name), text(name), low, high);
}

double CommandLine::real(const char* name) const { return parse_real(cat("--", name), text(name)); }

double CommandLine::positive(const char* name) const {
  const double value = real(name);
  if (!(value > 0.0 && std::isfinite(value)))
    throw UsageError(cat("--", name, " must be a positive number, got ", text(name)));
  return value;
}

bool CommandLine::print_help(const cxxopts::Options& options) const {
  if (given("help")) std::cout << options.help() << "\n";
  return given("help");
}

void SharedSettings::keep_quiet() {
  quiet = true;
  print = false;
  for (std::string* file : {&curves, &val_curves, &summary, &tensorboard, &report, &save_dir}) file->clear();
}

std::string SharedSettings::checkpoint_path(const std::string& run, uint64_t seed) const {
  const std::string file = seeds.size() == 1 ? run : cat(run, "_seed", seed);
  return (std::filesystem::path(save_dir) / (file + ".safetensors")).string();
}

std::string SharedSettings::init_path(const std::string& run) const {
  return (std::filesystem::path(init_from_dir) / (run + ".safetensors")).string();
}

void SharedSettings::add_files(const std::vector<std::string>& runs, std::vector<NamedFile>& inputs,
                               std::vector<NamedFile>& outputs) const {
  if (!batch_order.empty()) inputs.push_back({"--batch-order", batch_order});
  for (const auto& [option, path] :
       {std::pair{"--curves", curves}, std::pair{"--val-curves", val_curves}, std::pair{"--summary", summary},
        std::pair{"--stats", stats}, std::pair{"--report", report}})
    if (!path.empty()) outputs.push_back({option, path});
  for (const std::string& run : runs) {
    if (!init_from_dir.empty()) inputs.push_back({"--init-from", init_path(run)});
    if (!save_dir.empty())
      for (uint64_t seed : seeds) outputs.push_back({"--save", checkpoint_path(run, seed)});
  }
}

void read_shared(const CommandLine& line, SharedSettings& s) {
  s.seeds = lesson::parse_seeds(line.text("seeds"));
  if (line.given("threads")) s.threads = int(line.whole("threads", 1, kMaxThreads));
  s.quiet = line.given("quiet");
  s.curves = line.text("curves");
  s.val_curves = line.text("val-curves");
  s.summary = line.text("summary");
  s.save_dir = line.text("save");
  s.init_from_dir = line.text("init-from");
  s.batch_order = line.text("batch-order");
  s.tensorboard = line.text("tensorboard");
  s.report = line.text("report");
  s.stats = line.text("stats");
  if (line.given("stats-every")) {
    if (s.stats.empty()) throw UsageError("--stats-every needs --stats FILE: it says how often --stats records");
    s.stats_every = line.whole("stats-every", 1);
  }
  s.distributed = line.given("distributed");
  s.sync_bn = line.given("sync-bn");
  if (s.sync_bn && !s.distributed)
    throw UsageError("--sync-bn synchronizes BatchNorm across processes: it needs --distributed");
}

}  // namespace minidl::apps
