#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln::cli {

namespace {

// The wait before the first line: one second, or KILN_PROGRESS_DELAY seconds (tests set 0 so
// the line appears however fast the machine compiles).
std::chrono::milliseconds first_line_delay() {
  const char* text = std::getenv("KILN_PROGRESS_DELAY");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(1);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0.0) || seconds > 3600.0) return std::chrono::seconds(1);
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

bool interactive_stderr() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

Progress::Progress(std::string what) : what_(std::move(what)) {
  if (interactive_stderr()) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::stage(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = name;
}


void Progress::run() {
  using namespace std::chrono;
  std::unique_lock<std::mutex> lock(mutex_);
  // Quick commands print nothing: the first line comes after a second.
  if (wake_.wait_until(lock, start_ + first_line_delay(), [this] { return done_; })) return;
  while (!done_) {
    const double elapsed = duration<double>(steady_clock::now() - start_).count();
    // \r and "erase to end of line": the line is rewritten in place.
    std::fprintf(stderr, "\rkiln: compiling %s: %s%s%.1f s\033[K", what_.c_str(), stage_.c_str(),
                 stage_.empty() ? "" : " ", elapsed);
    std::fflush(stderr);
    shown_ = true;
    wake_.wait_for(lock, milliseconds(250), [this] { return done_; });
  }
  if (shown_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

Artifacts compile_with_progress(FunctionGraph graph, CompileOptions options, const std::string& what) {
  Progress progress(what);
  options.on_stage = [&progress](const std::string& name) { progress.stage(name); };
  return compile(std::move(graph), options);
}

}  // namespace kiln::cli
