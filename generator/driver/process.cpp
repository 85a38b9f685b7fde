#include "driver/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

extern char** environ;

namespace kiln {

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult result;
  if (argv.empty()) return result;
  int fds[2];
  // Close-on-exec: a child spawned meanwhile by another thread (run_processes) must not hold
  // this pipe's write end, or the read below would wait for that child too.
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe failed: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) result.output.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

std::vector<ProcessResult> run_processes(const std::vector<std::vector<std::string>>& argvs) {
  std::vector<ProcessResult> results(argvs.size());
  std::vector<std::thread> threads;
  for (std::size_t k = 1; k < argvs.size(); ++k)
    threads.emplace_back([&results, &argvs, k] { results[k] = run_process(argvs[k]); });
  if (!argvs.empty()) results[0] = run_process(argvs[0]);
  for (auto& t : threads) t.join();
  return results;
}

std::string find_executable(const std::string& program) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) != 0) return "";
    return fs::canonical(program, ec).string();
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / program;
    if (end > start && access(candidate.c_str(), X_OK) == 0) return fs::canonical(candidate, ec).string();
    start = end + 1;
  }
  return "";
}

std::vector<std::string> split_flags(const std::string& flags) {
  std::istringstream in(flags);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

}  // namespace kiln
