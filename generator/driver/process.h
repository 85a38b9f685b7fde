// Running the system compiler: fork/exec of an argument vector (no shell, so nothing in a
// path or flag can be interpreted as shell syntax), capturing its combined output.
#pragma once

#include <string>
#include <vector>

namespace kiln {

struct ProcessResult {
  int exit_code = -1;  ///< the exit status, or -1 when the program could not be run
  std::string output;  ///< stdout and stderr, interleaved
};

/// Runs argv[0] (looked up on PATH) with the arguments and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv);

/// Runs each argument vector at the same time (one thread waiting on each) and returns their
/// results in order.
std::vector<ProcessResult> run_processes(const std::vector<std::vector<std::string>>& argvs);

/// The executable `program` names (a path, or a name looked up in PATH), symbolic links
/// resolved; "" when there is none.
std::string find_executable(const std::string& program);

/// Splits a flags string like "-O2 -g" at whitespace (no quoting).
std::vector<std::string> split_flags(const std::string& flags);

}  // namespace kiln
