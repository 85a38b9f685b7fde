// A progress line on a terminal for commands that compile: after a second without finishing,
// "kiln: compiling NAME: build 3.4 s" on stderr, updated in place, erased when done. Nothing is
// printed when stderr is not a terminal (pipes, logs, CI) or TERM is "dumb". KILN_PROGRESS_DELAY
// (seconds) changes the wait before the first line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "compile/compile.h"

namespace kiln::cli {

class Progress {
 public:
  /// Starts the clock for compiling `what`; shown only when stderr is an interactive terminal.
  explicit Progress(std::string what);
  /// Erases the line (if one was shown) and stops.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// The stage now running ("rewrite", "generate", "build").
  void stage(const std::string& name);

 private:
  void run();

  std::string what_;
  std::string stage_;
  bool shown_ = false;
  bool done_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

/// compile() with a progress line for `what` (the graph file) while it runs.
Artifacts compile_with_progress(FunctionGraph graph, CompileOptions options, const std::string& what);

}  // namespace kiln::cli
