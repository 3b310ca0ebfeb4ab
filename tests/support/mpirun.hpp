#pragma once
// The start of an mpirun command line for the tests that run a program on several ranks.
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace minidl::testing {

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
