#include "experiments/mpi_runs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "minidl/tensor/error.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace fs = std::filesystem;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string mpirun_prefix([[maybe_unused]] int ranks, [[maybe_unused]] const std::string& session_dir) {
#ifdef MINIDL_LAB_MPIRUN
  std::string command = cat(MINIDL_LAB_MPIRUN, " --allow-run-as-root --oversubscribe --mca orte_tmpdir_base ",
                            quoted(session_dir), " -np ", ranks, " ");
#ifdef MINIDL_LAB_MPIRUN_ENV
  command += cat(MINIDL_LAB_MPIRUN_ENV, " ");
#endif
  return command;
#else
  return "";
#endif
}

MpiOutput run_under_mpirun(const std::string& who, const std::string& dir_name, int ranks, const std::string& program,
                           const std::string& arguments, bool curves) {
  const fs::path dir = fs::temp_directory_path() / cat(dir_name, "_", getpid());
  fs::create_directories(dir);
  const std::string command =
      cat(mpirun_prefix(ranks, dir.string()), quoted(program), arguments, " --summary ",
          quoted((dir / "summary.json").string()), curves ? " --curves " + quoted((dir / "curves.csv").string()) : "",
          " > ", quoted((dir / "out.txt").string()), " 2> ", quoted((dir / "err.txt").string()));
  const int status = std::system(command.c_str());
  const std::string err = read_file(dir / "err.txt");
  MpiOutput out;
  if (status == 0) out = {read_file(dir / "summary.json"), curves ? read_file(dir / "curves.csv") : ""};
  fs::remove_all(dir);
  if (status != 0) throw Error(cat(who, ": `", command, "` failed (status ", status, "): ", err));
  return out;
}

bool RankShift::same() const { return std::fabs(shift) <= bound; }

RankShift shift_from_one_rank(const std::vector<Record>& records, const std::string& label, int ranks,
                              const std::string& figure, double floor) {
  const std::vector<Record> runs = where(records, {{"norm", label}});
  const lesson::Spread one = spread(where_num(runs, "ranks", 1), figure);
  const lesson::Spread n = spread(where_num(runs, "ranks", ranks), figure);
  if (!one.count || !n.count) return {std::nan(""), 0.0};
  const double se = std::sqrt(one.sd * one.sd / double(one.count) + n.sd * n.sd / double(n.count));
  return {n.mean - one.mean, std::max(floor, 2.0 * se)};
}

bool not_run(const std::vector<Record>& records) {
  return !records.empty() && records.front().text("status") == "not run";
}

}  // namespace minidl::lab
