// Cache hygiene (issue 14, finding 5): a killed compile's temporary build folder is removed once
// it is old, a folder a running compile holds never is, and `kiln cache info` / `kiln cache
// clean [--max-size]` report and trim the cache.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "driver/cache_maintenance.h"
#include "driver/process.h"
#include "ir/error.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> folders_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory()) out.push_back(it->path());
  return out;
}

void age(const fs::path& p, std::chrono::hours hours) {
  fs::last_write_time(p, fs::file_time_type::clock::now() - hours);
}

// Starts `argv` in its own process group; returns its pid.
pid_t spawn(const std::vector<std::string>& argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

TEST_CASE("security: a killed compile's build folder is removed when stale, never while in use (compiled)") {
  const fs::path work = fs::path(KILN_TEST_CACHE_DIR) / "cache-hygiene";
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path cache = work / "cache";
  // A "compiler" that answers --version and then hangs, so the compile can be killed mid-build.
  const fs::path slow = work / "slow-cxx";
  std::ofstream(slow) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo slow 1.0; exit 0; fi\nexec sleep 120\n";
  fs::permissions(slow, fs::perms::owner_all);
  const std::string sample = std::string(KILN_SOURCE_DIR) + "/samples/log1p.json";
  const pid_t pid = spawn({KILN_BINARY, "compile", sample, "-o", (work / "out").string(), "--cache-dir",
                           cache.string(), "--cxx", slow.string()});
  REQUIRE(pid > 0);
  for (int i = 0; i < 600 && folders_in(cache / "tmp").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(folders_in(cache / "tmp").size() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the build
  const fs::path left = folders_in(cache / "tmp").front();

  // While the compile runs, its folder is in use: not removed, however old.
  age(left, std::chrono::hours(2));
  CHECK(remove_stale_build_folders((cache / "tmp").string(), std::chrono::seconds(0)) == 0);
  CHECK(cache_info(cache.string()).temp_in_use == 1);

  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(fs::exists(left));  // what a killed compile leaves behind
  const CacheInfo info = cache_info(cache.string());
  CHECK(info.temp_in_use == 0);
  CHECK(info.temp_unused == 1);
  ProcessResult shown = run_process({KILN_BINARY, "cache", "info", "--cache-dir", cache.string()});
  CHECK(shown.exit_code == 0);
  CHECK(shown.output.find("0 in use, 1 left by failed or killed compiles") != std::string::npos);

  // A young left-over folder stays (a compile may just have made it); an old one goes with the
  // next build.
  age(left, std::chrono::hours(0));
  CHECK(remove_stale_build_folders((cache / "tmp").string(), kStaleBuildFolderAge) == 0);
  age(left, std::chrono::hours(2));
  ProcessResult built = run_process({KILN_BINARY, "compile", sample, "-o", (work / "out").string(), "--cache-dir",
                                     cache.string()});
  INFO(built.output);
  CHECK(built.exit_code == 0);
  CHECK_FALSE(fs::exists(left));
  CHECK(folders_in(cache / "tmp").empty());

  // A folder held by a live lock is never removed.
  fs::create_directories(cache / "tmp" / "held");
  {
    BuildFolderLock lock((cache / "tmp" / "held").string());
    age(cache / "tmp" / "held", std::chrono::hours(5));
    CHECK(remove_stale_build_folders((cache / "tmp").string(), std::chrono::seconds(0)) == 0);
  }
  CHECK(remove_stale_build_folders((cache / "tmp").string(), std::chrono::seconds(0)) == 1);
  fs::remove_all(work);
}

TEST_CASE("security: kiln cache clean trims the cache to a size, least recently used first (compiled)") {
  const fs::path work = fs::path(KILN_TEST_CACHE_DIR) / "cache-clean";
  fs::remove_all(work);
  const std::string cache = (work / "cache").string();
  const std::string src = std::string(KILN_SOURCE_DIR) + "/samples/";
  for (const char* graph : {"log1p.json", "softplus.json"}) {
    ProcessResult r = run_process({KILN_BINARY, "compile", src + graph, "-o", (work / "out").string(), "--cache-dir", cache});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  CacheInfo before = cache_info(cache);
  REQUIRE(before.entries == 2);
  CHECK(before.direct_records == 2);
  // log1p is used again (a direct-mode hit): softplus is now the least recently used.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(run_process({KILN_BINARY, "compile", src + "log1p.json", "-o", (work / "out").string(), "--cache-dir", cache})
              .exit_code == 0);
  ProcessResult trim = run_process({KILN_BINARY, "cache", "clean", "--cache-dir", cache, "--max-size",
                                    std::to_string(before.entry_bytes - 1)});
  CHECK(trim.exit_code == 0);
  CHECK(trim.output.find("removed 1 library") != std::string::npos);
  CacheInfo after = cache_info(cache);
  CHECK(after.entries == 1);
  CHECK(after.direct_records == 1);  // softplus's record went with its entry
  ProcessResult hit = run_process({KILN_BINARY, "compile", src + "log1p.json", "-o", (work / "out").string(), "--cache-dir", cache});
  CHECK(hit.output.find("(cached)") != std::string::npos);

  CHECK(run_process({KILN_BINARY, "cache", "clean", "--cache-dir", cache}).exit_code == 0);
  CHECK(cache_info(cache).entries == 0);
  CHECK(run_process({KILN_BINARY, "cache", "clean", "--cache-dir", cache, "--max-size", "lots"}).exit_code == 1);
  CHECK(parse_size("500M") == 500ull << 20);
  CHECK(parse_size("1.5GiB") == 3ull << 29);
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("2kb") == 2048);
  CHECK_THROWS_AS(parse_size("-1"), UserError);
  CHECK_THROWS_AS(parse_size("10X"), UserError);
  fs::remove_all(work);
}
