#pragma once
// The start of an mpirun command line for the tests that run a program on several ranks.
#include <string>
#include <vector>

#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace minidl::testing {

/// The mpirun configure found (tests/CMakeLists.txt defines MINIDL_MPIRUN); empty in a build
/// without MPI.
#ifdef MINIDL_MPIRUN
inline const std::string kMpirun = MINIDL_MPIRUN;
#else
inline const std::string kMpirun;
#endif

/// True when this build can start a program on several ranks; otherwise reports the running
/// test skipped (support/skip.hpp).
inline bool mpirun_or_skip() {
  if (!kMpirun.empty()) return true;
  skip_test(
      "minidl was configured without MPI (MINIDL_WITH_MPI=OFF, or not found: apt-get install -y libopenmpi-dev "
      "openmpi-bin)");
  return false;
}

/// {mpirun, --allow-run-as-root, --oversubscribe (root in CI, ranks on fewer cores), --mca
/// orte_tmpdir_base DIR, -np N}. DIR is this test process's own: under OpenMPI's shared
/// default (/tmp/ompi.HOST.UID) two mpirun started at once by tests side by side can remove
/// it under each other and fail in orte_init.
inline std::vector<std::string> mpirun_argv(const std::string& mpirun, int ranks) {
  static const TempDir session;  // one per test process: its mpirun calls run one at a time
  return {mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "orte_tmpdir_base", session.path().string(),
          "-np",  std::to_string(ranks)};
}

}  // namespace minidl::testing
