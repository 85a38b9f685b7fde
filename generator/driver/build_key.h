// A generated library's cache key, in named parts (kiln's version, the compiler, the flags, the
// generated header and source, ...), each hashed on its own: the key is the hash of the list,
// and on a miss `kiln compile -v` can say which part changed since the last build of that
// library name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln {

class BuildKey {
 public:
  /// Adds a part: `what` names it in messages ("generated source"), `text` is hashed.
  void add(const std::string& what, const std::string& text);
  /// The cache key: sha256 over the parts' names and hashes, in order.
  std::string digest() const;

  /// Why a build of library `name` missed the cache at `cache_root`: the parts that differ
  /// from the last key recorded for that name, or that there is none.
  std::string explain_miss(const std::string& cache_root, const std::string& name) const;
  /// Records this key as the last one built or found for `name` (best effort: a cache that
  /// cannot be written only loses the explanation).
  void remember(const std::string& cache_root, const std::string& name) const;

 private:
  std::vector<std::pair<std::string, std::string>> parts_;  // (what, sha256 of its text)
};

}  // namespace kiln
