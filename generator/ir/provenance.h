// Node provenance: which nodes of the user's graph file an Apply node stands for.
//
// The loader gives every node one Origin (its JSON pointer and the op written there). Whatever
// later replaces nodes hands their origins on: FunctionGraph::replace gives the nodes a
// replacement brings in the origins of the nodes it removes (a Gemv from a Dot carries the
// Dot's; a fused Composite all its members'), and grad, vectorize and graph_replace build each
// node's derived nodes inside an OriginScope of that node. Lists are immutable and shared, so a
// node's provenance costs one pointer and handing it on copies nothing.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// One node of the user's graph file.
struct Origin {
  std::string pointer;  ///< its JSON pointer, e.g. "/nodes/3"
  std::string op;       ///< its "op" as written there, e.g. "Dot", "log"

  bool operator==(const Origin& o) const { return pointer == o.pointer && op == o.op; }
  bool operator!=(const Origin& o) const { return !(*this == o); }
};

/// A node's origins: sorted (JSON pointers in file order, "/nodes/2" before "/nodes/10"),
/// without duplicates, shared and immutable. Null when the node has none (built through the
/// C++ API, not loaded from a file).
using Origins = std::shared_ptr<const std::vector<Origin>>;

/// Origins from a list in any order (sorted, duplicates dropped); null for an empty list.
Origins make_origins(std::vector<Origin> list);

/// The union of two lists. Returns `a` or `b` itself when one holds the other (no copy).
Origins merge_origins(const Origins& a, const Origins& b);

/// File order of two JSON pointers: segment by segment, numeric segments compared as numbers.
bool pointer_less(const std::string& a, const std::string& b);

/// "/nodes/0 Dot, /nodes/3 log" (empty for none): for messages and dprint.
std::string origins_str(const Origins& origins);

/// While alive, every Apply node created on this thread gets `origins` (nested scopes stack).
/// Transformations that derive new nodes from one node (its gradient, its batched form) build
/// them inside a scope of that node's origins.
class OriginScope {
 public:
  explicit OriginScope(Origins origins);
  ~OriginScope();
  OriginScope(const OriginScope&) = delete;
  OriginScope& operator=(const OriginScope&) = delete;

  /// The origins of the innermost live scope on this thread (null outside any scope).
  static const Origins& current();

 private:
  Origins saved_;
};

}  // namespace kiln
