#include "program.hpp"

#include <csignal>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>

#include "interrupt.hpp"
#include "minidl/io/atomic_file.hpp"
#include "report_page.hpp"
#include "tensorboard_logs.hpp"
#if MINIDL_WITH_MPI
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/environment.hpp"
#endif

namespace minidl::apps {

int guarded_main(const std::string& program, const std::function<int()>& run,
                 const std::function<std::string()>& out_of_memory) {
  const auto fail = [&](const std::string& what, int code) {
    std::cerr << program << ": " << what << std::endl;
    return code;
  };
  try {
    return run();
  } catch (const UsageError& e) {
    return fail(e.what(), 2);
  } catch (const cxxopts::exceptions::exception& e) {
    return fail(cat(e.what(), " (see ", program, " --help)"), 2);
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(e.what(), 2);
  } catch (const ResourceError& e) {
    return fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail(out_of_memory(), 1);
  } catch (const std::exception& e) {
    return fail(cat("error: ", e.what()), 1);
  }
}

bool write_reporting(const std::string& program, const std::function<void()>& write) {
  try {
    write();
    return true;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << std::endl;
    return false;
  }
}

namespace {

const char* signal_name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

nlohmann::ordered_json distributed_json(const SharedSettings& s) {
#if MINIDL_WITH_MPI
  const distributed::Traffic t = distributed::traffic();
  return {
      {"ranks", distributed::world_size()}, {"sync_bn", s.sync_bn}, {"collectives", t.collectives}, {"bytes", t.bytes}};
#else
  (void)s;
  return nullptr;
#endif
}

}  // namespace

int exit_code(const std::string& program, bool failed, bool printed) {
  if (!printed)
    std::cerr << program
              << ": cannot write the results to standard output (closed or full); every output file was still written"
              << std::endl;
  if (const int signal = stop_signal()) {
    std::cerr << program << ": interrupted by " << signal_name(signal)
              << ": the runs stopped at their next step; the curves and summary hold what ran" << std::endl;
    return 128 + signal;
  }
  return failed || !printed ? 1 : 0;
}

std::string summary_json(const SharedSettings& s, const nlohmann::ordered_json& settings, int stop_signal,
                         const nlohmann::ordered_json& tables) {
  using json = nlohmann::ordered_json;
  json summary = {{"settings", settings}, {"interrupted", stop_signal ? json(signal_name(stop_signal)) : json()}};
  for (const auto& [key, table] : tables.items()) summary[key] = table;
  if (s.distributed) summary["distributed"] = distributed_json(s);
  return summary.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void write_comparisons(const SharedSettings& s, const std::vector<RunLog>& logs, const std::string& summary_json,
                       const std::string& title, const std::string& results_table) {
  if (!s.tensorboard.empty()) write_tensorboard(s.tensorboard, logs, settings_markdown(summary_json));
  if (!s.report.empty()) io::write_file_atomically(s.report, report_page(title, logs, results_table));
}

}  // namespace minidl::apps
