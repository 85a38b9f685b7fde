// Keeping the build cache (driver/build.h) tidy: temporary build folders that a killed or
// failed compile left behind are removed once they are old and no process holds them, and
// `kiln cache info` / `kiln cache clean [--max-size]` report and trim the cache.
//
// A compile holds an exclusive flock(2) on its temporary folder for as long as it builds
// (BuildFolderLock). The kernel drops the lock when the process ends, however it ends, so a
// folder nobody can lock is in use and is never touched; one that can be locked and whose
// modification time is older than the given age was left behind. (The age covers the moment
// between a compile creating its folder and locking it.)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kiln {

/// An exclusive lock on a temporary build folder for the lifetime of the object (nothing when
/// the folder cannot be opened: the lock only protects the folder from cleaning).
class BuildFolderLock {
 public:
  explicit BuildFolderLock(const std::string& folder);
  ~BuildFolderLock();
  BuildFolderLock(const BuildFolderLock&) = delete;
  BuildFolderLock& operator=(const BuildFolderLock&) = delete;

 private:
  int fd_ = -1;
};

/// How old an unlocked temporary folder must be before builds remove it on their own: failed
/// builds keep their sources that long for the user to look at.
constexpr std::chrono::seconds kStaleBuildFolderAge{3600};

/// Removes the folders in `tmp_root` (the cache's tmp/ folder, or the --no-cache build folder)
/// that no process holds and that were last modified more than `min_age` ago. Errors are
/// ignored (another process may be cleaning too). Returns how many were removed.
int remove_stale_build_folders(const std::string& tmp_root, std::chrono::seconds min_age);

/// What `kiln cache info` reports.
struct CacheInfo {
  std::string root;                   ///< the cache folder
  std::int64_t entries = 0;           ///< built libraries
  std::uint64_t entry_bytes = 0;      ///< their bytes
  std::int64_t direct_records = 0;    ///< direct-mode records (driver/direct_cache.h)
  std::int64_t temp_in_use = 0;       ///< temporary build folders held by a running compile
  std::int64_t temp_unused = 0;       ///< ... and the others (failed or killed compiles)
  std::uint64_t temp_bytes = 0;       ///< bytes in temporary folders
};

/// Counts what the cache folder `root` holds.
CacheInfo cache_info(const std::string& root);

/// What `kiln cache clean` did.
struct CleanReport {
  std::int64_t entries_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::int64_t temp_removed = 0;
};

/// Removes unused temporary folders older than a minute and cache entries: all of them, or,
/// with `max_bytes`, the least recently used until the entries take at most `max_bytes`.
/// Direct-mode records whose entry is gone are removed with it. Entries are renamed away
/// before they are deleted, so a concurrent reader sees an entry whole or not at all.
CleanReport clean_cache(const std::string& root, std::uint64_t max_bytes = 0, bool limit_size = false);

/// Parses a size such as "500M", "2G", "1.5GiB", "4096" (bytes; K, M, G, T are powers of 1024).
/// Throws UserError for anything else.
std::uint64_t parse_size(const std::string& text);

/// Marks a cache entry folder as just used (its modification time), for clean_cache's order.
void touch_cache_entry(const std::string& entry_dir);

}  // namespace kiln
