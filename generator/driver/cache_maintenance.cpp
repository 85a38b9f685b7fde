#include "driver/cache_maintenance.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ir/error.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

bool is_hex(const std::string& s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::uint64_t folder_bytes(const fs::path& dir) {
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return bytes;
}

// Whether `dir` was last modified at least `age` ago.
bool older_than(const fs::path& dir, std::chrono::seconds age) {
  std::error_code ec;
  const auto mtime = fs::last_write_time(dir, ec);
  return !ec && fs::file_time_type::clock::now() - mtime >= age;
}

// Calls f(path) for each temporary folder that no process holds, with its lock held; counts
// the others in `in_use`.
template <typename F>
void for_each_unlocked_folder(const fs::path& tmp_root, std::int64_t* in_use, F&& f) {
  std::error_code ec;
  for (fs::directory_iterator it(tmp_root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || it->is_symlink(type_ec)) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
      f(it->path());
    else if (in_use)
      ++*in_use;
    ::close(fd);
  }
}

struct Entry {
  fs::path dir;
  fs::file_time_type used;
  std::uint64_t bytes;
};

std::vector<Entry> cache_entries(const fs::path& root) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (fs::directory_iterator shard(root, ec), end; !ec && shard != end; shard.increment(ec)) {
    if (!is_hex(shard->path().filename().string(), 2) || !shard->is_directory(ec)) continue;
    std::error_code inner;
    for (fs::directory_iterator e(shard->path(), inner); !inner && e != end; e.increment(inner)) {
      if (!is_hex(e->path().filename().string(), 64) || !e->is_directory(inner)) continue;
      std::error_code t;
      entries.push_back({e->path(), fs::last_write_time(e->path(), t), folder_bytes(e->path())});
    }
  }
  return entries;
}

// Direct-mode records (root/direct/xx/key): first line, the build key of their entry.
template <typename F>
void for_each_direct_record(const fs::path& root, F&& f) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root / "direct", ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) f(it->path());
}

}  // namespace

BuildFolderLock::BuildFolderLock(const std::string& folder) {
  fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

BuildFolderLock::~BuildFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

int remove_stale_build_folders(const std::string& tmp_root, std::chrono::seconds min_age) {
  int removed = 0;
  for_each_unlocked_folder(tmp_root, nullptr, [&](const fs::path& dir) {
    if (!older_than(dir, min_age)) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
    removed += ec ? 0 : 1;
  });
  return removed;
}

CacheInfo cache_info(const std::string& root_text) {
  const fs::path root(root_text);
  CacheInfo info;
  info.root = root_text;
  for (const Entry& e : cache_entries(root)) {
    ++info.entries;
    info.entry_bytes += e.bytes;
  }
  for_each_direct_record(root, [&](const fs::path&) { ++info.direct_records; });
  for_each_unlocked_folder(root / "tmp", &info.temp_in_use, [&](const fs::path& dir) {
    ++info.temp_unused;
    info.temp_bytes += folder_bytes(dir);
  });
  return info;
}

CleanReport clean_cache(const std::string& root_text, std::uint64_t max_bytes, bool limit_size) {
  const fs::path root(root_text);
  CleanReport report;
  report.temp_removed = remove_stale_build_folders((root / "tmp").string(), std::chrono::seconds(60));

  std::vector<Entry> entries = cache_entries(root);
  std::uint64_t total = 0;
  for (const Entry& e : entries) total += e.bytes;
  // Least recently used first.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  std::error_code ec;
  fs::create_directories(root / "tmp", ec);
  int serial = 0;
  for (const Entry& e : entries) {
    if (limit_size && total <= max_bytes) break;
    // Renamed out of place first: a reader then finds the entry whole or not at all.
    const fs::path doomed = root / "tmp" / ("evicted-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::rename(e.dir, doomed, ec);
    if (ec) continue;
    fs::remove_all(doomed, ec);
    total -= e.bytes;
    report.bytes_removed += e.bytes;
    ++report.entries_removed;
  }
  // Direct-mode records of entries that are gone.
  for_each_direct_record(root, [&](const fs::path& record) {
    std::ifstream in(record);
    std::string key;
    std::getline(in, key);
    std::error_code e;
    if (!is_hex(key, 64) || !fs::exists(root / key.substr(0, 2) / key, e)) fs::remove(record, e);
  });
  return report;
}

std::uint64_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double value = -1;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
  }
  std::string unit = text.substr(std::min(pos, text.size()));
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  const std::string units = "KMGT";
  double scale = 1;
  if (!unit.empty()) {
    const std::size_t k = units.find(unit);
    if (unit.size() != 1 || k == std::string::npos) value = -1;
    else scale = std::pow(1024.0, static_cast<double>(k + 1));
  }
  const double bytes = value * scale;
  if (!(value >= 0) || !std::isfinite(bytes) || bytes >= 1.8e19)
    throw UserError("expected a size such as 500M, 2G or 4096 (bytes), not \"" + text + "\"");
  return static_cast<std::uint64_t>(bytes);
}

void touch_cache_entry(const std::string& entry_dir) {
  std::error_code ec;
  fs::last_write_time(entry_dir, fs::file_time_type::clock::now(), ec);
}

}  // namespace kiln
