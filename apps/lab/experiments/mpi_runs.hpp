#pragma once
// What the two experiments that run a program under mpirun share (nothing_to_sync: digits;
// charlm_sync: charlm): the command line's start, and the rule that says whether N ranks
// trained the same model as one.
#include <string>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

/// text in single quotes, one word of a shell command line.
std::string quoted(const std::string& text);

/// "mpirun --allow-run-as-root --oversubscribe --mca orte_tmpdir_base DIR -np N " (as root in
/// CI, N ranks on fewer cores), with the sanitizer build's environment for the ranks; empty
/// without MPI. session_dir: an existing directory of this run's own, where OpenMPI keeps
/// its session files: two mpirun started at once under the shared default (/tmp/ompi.HOST.UID)
/// can remove it under each other and fail in orte_init.
std::string mpirun_prefix(int ranks, const std::string& session_dir);

/// What a program run under mpirun wrote: its --summary and, when asked for, its --curves.
struct MpiOutput {
  std::string summary, curves;
};
/// Runs `program arguments --summary FILE [--curves FILE]` under mpirun on `ranks` ranks, in a
/// directory of the temp dir of its own (`dir_name` and the process id), and returns what it
/// wrote; throws naming `who`, the command, its status and its stderr when it fails.
MpiOutput run_under_mpirun(const std::string& who, const std::string& dir_name, int ranks, const std::string& program,
                           const std::string& arguments, bool curves);

/// How far the mean of `figure` over the runs of `label` on N ranks is from its mean on one
/// rank, and the bound it must stay within to count as the same: `floor`, or twice the
/// standard error of the difference over the seeds.
struct RankShift {
  double shift, bound;
  bool same() const;
};
RankShift shift_from_one_rank(const std::vector<Record>& records, const std::string& label, int ranks,
                              const std::string& figure, double floor);

/// True when the records say the experiment did not run (no MPI built in).
bool not_run(const std::vector<Record>& records);

}  // namespace minidl::lab
