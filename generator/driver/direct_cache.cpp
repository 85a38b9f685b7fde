#include "driver/direct_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "driver/cache_maintenance.h"
#include "driver/emit_files.h"
#include "io/safe_file.h"
#include "ir/error.h"
#include "util/sha256.h"
#include "kiln/version.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

// Which kiln generated the code: templates and runtime headers are embedded in the executable,
// so its path, size and modification time stand for all of them (as ccache's compiler_check
// "mtime"): a rebuilt kiln never reuses another kiln's records. Empty when the executable
// cannot be found (no /proc): then there is no direct mode.
std::string kiln_identity() {
  static const std::string identity = []() -> std::string {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    const auto size = fs::file_size(exe, ec);
    if (ec) return "";
    const auto mtime = fs::last_write_time(exe, ec).time_since_epoch().count();
    if (ec) return "";
    return "kiln " KILN_VERSION_STRING "\n" + exe.string() + "\n" + std::to_string(size) + "\n" +
           std::to_string(mtime);
  }();
  return identity;
}

// Each field is preceded by its length, so no two different field lists hash the same bytes.
void update_field(Sha256& h, const std::string& field) {
  h.update(std::to_string(field.size())).update(":").update(field);
}

fs::path record_path(const BuildOptions& build, const std::string& key) {
  return fs::path(resolve_cache_dir(build)) / "direct" / key.substr(0, 2) / key;
}

}  // namespace

DirectCacheKey direct_cache_key(const std::string& graph_text, const std::string& graph_dir,
                                const BuildOptions& build, const std::string& other_options) {
  const std::string kiln = kiln_identity();
  if (kiln.empty()) return {};
  Sha256 h;
  update_field(h, "kiln direct-mode key v1");
  update_field(h, kiln);
  update_field(h, resolve_compiler(build));
  update_field(h, compiler_identity(build));
  for (const auto& flag : generated_code_flags(build)) update_field(h, flag);
  update_field(h, build.march);
  for (const auto& variant : build.march_variants) update_field(h, "variant " + variant);
  for (const auto& arch : build.cuda_arch) update_field(h, "cuda arch " + arch);  // (refused by a cpp build)
  update_field(h, other_options);
  update_field(h, graph_text);
  const fs::path dir = fs::absolute(graph_dir.empty() ? "." : graph_dir).lexically_normal();
  for (const auto& npy : graph_npy_files(graph_text, graph_dir)) {
    // Read as the loader reads it (io/safe_file.h: a regular file of bounded size inside the
    // graph's folder) or not at all: then there is no direct mode and loading the graph
    // reports the place.
    const std::string relative = fs::path(npy).lexically_relative(dir).string();
    std::string bytes;
    try {
      bytes = read_graph_relative_file(graph_dir.empty() ? "." : graph_dir, relative, "");
    } catch (const UserError&) {
      return {};
    }
    update_field(h, npy);
    update_field(h, bytes);
  }
  return {h.hex_digest()};
}

std::optional<DirectCacheHit> direct_cache_lookup(const DirectCacheKey& key, const BuildOptions& build, bool program) {
  if (key.key.empty() || !build.use_cache) return std::nullopt;
  std::ifstream in(record_path(build, key.key), std::ios::binary);
  std::string build_key, name;
  if (!std::getline(in, build_key) || !std::getline(in, name) || build_key.size() != 64 || name.empty())
    return std::nullopt;
  DirectCacheHit hit{name, cache_entry_dir(build, build_key)};
  std::vector<std::string> files = {"lib" + name + ".so", name + ".h", name + ".cpp"};
  if (program) files.insert(files.end(), {name + "_main.cpp", name});
  std::error_code ec;
  for (const auto& file : files)
    if (!fs::is_regular_file(fs::path(hit.entry_dir) / file, ec)) return std::nullopt;
  touch_cache_entry(hit.entry_dir);  // recently used: kept longest by `kiln cache clean --max-size`
  return hit;
}

void direct_cache_record(const DirectCacheKey& key, const std::string& name, const std::string& build_key,
                         const BuildOptions& build) {
  if (key.key.empty() || !build.use_cache) return;
  const fs::path path = record_path(build, key.key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // A temporary name and a rename: concurrent kiln processes never read half a record.
  fs::path tmp = path;
  tmp += "." + std::to_string(getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << build_key << "\n" << name << "\n";
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace kiln
