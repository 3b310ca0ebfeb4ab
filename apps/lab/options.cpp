#include "options.hpp"

#include <charconv>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "minidl/tensor/error.hpp"
#include "runs/seeds.hpp"

namespace fs = std::filesystem;

namespace minidl::lab {

namespace {

cxxopts::Options command_line() {
  cxxopts::Options options("lab", "Runs the lesson's claims as experiments and writes their report.");
  options.custom_help("list | run NAME... | run all [OPTION...]");
  options.positional_help("");
  options.set_width(100);
  auto text = [] { return cxxopts::value<std::string>(); };
  options.add_options()("seeds", "seeds of every training run: 0-4, 0,3,7", text()->default_value("0-4"), "LIST")(
      "out", "directory for the CSV files, pictures and README.md (default: the project's docs/lab)", text(), "DIR")(
      "quick", "one seed, small grids, one epoch: every experiment exercised in seconds")(
      "jobs", "runs at once, each on its own thread, with the results of one by one (default: the cores)", text(), "N")(
      "data", "directory with digits.csv and the split files (default: the project's data/)", text(), "DIR")(
      "help", "show this help")("words", "", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"words"});
  return options;
}

int parse_jobs(const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > 1024)
    throw UsageError(cat("--jobs expects a whole number from 1 to 1024, got \"", text, "\""));
  return value;
}

// Creates dir and writes a probe file there, so a run does not train for minutes and then
// fail to save.
void check_writable(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir))
    throw UsageError(cat("--out ", dir, " cannot be created: ", error ? error.message() : "it is not a directory"));
  const fs::path probe = fs::path(dir) / ".lab_write_probe";
  {
    std::ofstream out(probe);
    if (!(out << "probe")) throw UsageError(cat("--out ", dir, " is not writable"));
  }
  fs::remove(probe, error);
}

// The project's data, where the program was built from.
std::string default_data_dir() {
  const fs::path dir(MINIDL_DATA_DIR);
  if (!fs::exists(dir / "digits.csv")) throw UsageError("cannot find the digits data: pass --data DIR");
  return dir.lexically_normal().string();
}

}  // namespace

Command parse_command(int argc, char** argv) {
  cxxopts::Options options = command_line();
  Command command;
  command.help = options.help();
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) return command;
  const std::vector<std::string> words =
      args.count("words") ? args["words"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (words.empty()) throw UsageError("no command: use `lab list` or `lab run NAME... | all` (see lab --help)");
  if (words.front() == "list") {
    if (words.size() > 1) throw UsageError(cat("`lab list` takes no names, got \"", words[1], "\""));
    command.kind = Command::Kind::List;
    return command;
  }
  if (words.front() != "run")
    throw UsageError(cat("unknown command \"", words.front(), "\": use `lab list` or `lab run NAME... | all`"));
  if (words.size() < 2) throw UsageError("`lab run` needs experiment names or all (see `lab list`)");
  command.kind = Command::Kind::Run;
  command.names.assign(words.begin() + 1, words.end());
  Settings& s = command.settings;
  s.quick = args.count("quick") > 0;
  s.seeds = lesson::parse_seeds(args["seeds"].as<std::string>());
  if (s.quick && !args.count("seeds")) s.seeds = {0};
  if (s.quick) s.seeds.resize(1);
  s.jobs = args.count("jobs") ? parse_jobs(args["jobs"].as<std::string>())
                              : int(std::max(1u, std::thread::hardware_concurrency()));
  s.data_dir = args.count("data") ? args["data"].as<std::string>() : default_data_dir();
  s.out_dir = args.count("out") ? args["out"].as<std::string>() : std::string(MINIDL_LAB_OUT_DIR);
  check_writable(s.out_dir);
  return command;
}

}  // namespace minidl::lab
