#include "driver/build_key.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "util/sha256.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

// One file per library name (a C identifier, so a safe file name) under the cache folder.
fs::path record_path(const std::string& cache_root, const std::string& name) {
  return fs::path(cache_root) / "last-key" / name;
}

}  // namespace

void BuildKey::add(const std::string& what, const std::string& text) {
  parts_.emplace_back(what, Sha256().update(text).hex_digest());
}

std::string BuildKey::digest() const {
  Sha256 h;
  for (const auto& [what, hash] : parts_) h.update(what).update("\t").update(hash).update("\n");
  return h.hex_digest();
}

std::string BuildKey::explain_miss(const std::string& cache_root, const std::string& name) const {
  std::ifstream in(record_path(cache_root, name));
  if (!in) return "no earlier build of " + name + " in this cache";
  std::map<std::string, std::string> before;
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos) before[line.substr(0, tab)] = line.substr(tab + 1);
  }
  std::string changed;
  for (const auto& [what, hash] : parts_) {
    const auto it = before.find(what);
    if (it != before.end() && it->second == hash) continue;
    changed += (changed.empty() ? "" : ", ") + what;
  }
  if (changed.empty()) return "the last build of " + name + " had the same key, but its cache entry is gone";
  return "changed since the last build of " + name + ": " + changed;
}

void BuildKey::remember(const std::string& cache_root, const std::string& name) const {
  std::error_code ec;
  const fs::path path = record_path(cache_root, name);
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;
  // Written beside and renamed, so concurrent builds never leave half a record.
  const fs::path tmp = path.string() + ".tmp" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [what, hash] : parts_) out << what << "\t" << hash << "\n";
    if (!out) return;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace kiln
