#include "driver/build.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "driver/process.h"
#include "driver/sha256.h"
#include "kiln/version.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write " + path.string());
  out << text;
  if (!out) throw UserError("error writing " + path.string());
}

// `cxx --version` plus the compiler's resolved path: part of every cache key.
const std::string& compiler_identity(const std::string& cxx) {
  static std::map<std::string, std::string> memo;
  auto it = memo.find(cxx);
  if (it != memo.end()) return it->second;
  ProcessResult r = run_process({cxx, "--version"});
  if (r.exit_code != 0)
    throw CompileFailure("cannot run the C++ compiler \"" + cxx + "\": " + r.output +
                         " (set --cxx or $CXX)");
  return memo.emplace(cxx, r.output).first->second;
}

std::string unique_suffix() {
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(rd()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  std::string out;
  std::size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (start) out += "[... " + std::to_string(start) + " lines ...]\n";
  for (std::size_t i = start; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace

std::string resolve_compiler(const BuildOptions& options) {
  if (!options.cxx.empty()) return options.cxx;
  const char* env = std::getenv("CXX");
  return env && *env ? env : "c++";
}

std::string resolve_cache_dir(const BuildOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "kiln").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "kiln").string();
  return (fs::temp_directory_path() / "kiln-cache").string();
}

std::vector<std::string> generated_code_flags(const BuildOptions& options) {
  std::vector<std::string> flags = {"-std=c++17", options.opt_level, "-fPIC", "-fopenmp",
                                    "-fvisibility=hidden", "-fno-math-errno"};
  if (!options.march.empty()) flags.push_back("-march=" + options.march);
  flags.insert(flags.end(), options.cxxflags.begin(), options.cxxflags.end());
  return flags;
}

BuildResult build_library(const CppLibrary& lib, const BuildOptions& options, bool program) {
  const std::string cxx = resolve_compiler(options);
  const std::vector<std::string> flags = generated_code_flags(options);
  std::vector<std::string> link = {"-lm"};
  if (lib.needs_blas) link.insert(link.begin(), "-lopenblas");

  Sha256 key_hash;
  key_hash.update("kiln " KILN_VERSION_STRING "\n").update(compiler_identity(cxx)).update(cxx);
  for (const auto& f : flags) key_hash.update("\n").update(f);
  for (const auto& f : link) key_hash.update("\n").update(f);
  key_hash.update("\nheader\n").update(lib.header).update("\nsource\n").update(lib.source);
  if (program) key_hash.update("\nprogram\n").update(lib.main_program);
  BuildResult result;
  result.key = key_hash.hex_digest();

  const std::string so_name = "lib" + lib.name + ".so";
  fs::path root = resolve_cache_dir(options);
  fs::path final_dir = root / result.key.substr(0, 2) / result.key;
  if (options.use_cache && fs::exists(final_dir / so_name) && (!program || fs::exists(final_dir / lib.name))) {
    result.library_path = (final_dir / so_name).string();
    if (program) result.program_path = (final_dir / lib.name).string();
    result.cache_hit = true;
    return result;
  }

  std::error_code ec;
  fs::path work = (options.use_cache ? root / "tmp" : fs::temp_directory_path() / "kiln-build") /
                  (result.key.substr(0, 16) + "-" + unique_suffix());
  fs::create_directories(work, ec);
  if (ec) throw UserError("cannot create build folder " + work.string() + ": " + ec.message());
  write_file(work / (lib.name + ".h"), lib.header);
  write_file(work / (lib.name + ".cpp"), lib.source);

  std::vector<std::string> cmd = {cxx};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  cmd.insert(cmd.end(), {"-shared", "-I", work.string(), (work / (lib.name + ".cpp")).string(), "-o",
                         (work / so_name).string()});
  cmd.insert(cmd.end(), link.begin(), link.end());
  ProcessResult r = run_process(cmd);
  auto fail = [&](const std::string& what, const ProcessResult& pr) {
    throw CompileFailure(what + " failed (exit code " + std::to_string(pr.exit_code) + "); the generated sources are kept in " +
                         work.string() + "\n" + tail_lines(pr.output, 60));
  };
  if (r.exit_code != 0) fail("compiling the generated library", r);

  if (program) {
    write_file(work / (lib.name + "_main.cpp"), lib.main_program);
    std::vector<std::string> pcmd = {cxx, "-std=c++17", "-O2", "-I", work.string(),
                                     (work / (lib.name + "_main.cpp")).string(), "-o", (work / lib.name).string(),
                                     "-L", work.string(), "-l" + lib.name, "-Wl,-rpath,$ORIGIN"};
    ProcessResult pr = run_process(pcmd);
    if (pr.exit_code != 0) fail("compiling the standalone program", pr);
  }

  if (!options.use_cache) {
    result.library_path = (work / so_name).string();
    if (program) result.program_path = (work / lib.name).string();
    return result;
  }
  // Publish: everything into the final folder by rename; the library goes last, so a reader
  // that sees it sees a complete entry. Concurrent builders of the same key race harmlessly.
  fs::create_directories(final_dir, ec);
  for (const auto& entry : fs::directory_iterator(work)) {
    if (entry.path().filename() == so_name) continue;
    fs::rename(entry.path(), final_dir / entry.path().filename(), ec);
  }
  fs::rename(work / so_name, final_dir / so_name, ec);
  if (ec) throw UserError("cannot publish " + so_name + " into the cache " + final_dir.string() + ": " + ec.message());
  fs::remove_all(work, ec);
  result.library_path = (final_dir / so_name).string();
  if (program) result.program_path = (final_dir / lib.name).string();
  return result;
}

}  // namespace kiln
