// Local rewrites and the equilibrium driver that applies a set of them until none fires.
//
// A NodeRewrite looks at one node and returns replacements for its outputs, or nothing. Every
// replacement is checked before it is applied: same dtype and rank, no conflicting static
// length, and no dimension that was statically 1 (broadcastable) becoming unknown — so a rule
// can never change a dtype or the broadcasting of what follows. Each rule makes the graph
// smaller or more canonical, so no two rules undo each other; an iteration cap guards anyway.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/fgraph.h"
#include "rewrite/pattern.h"

namespace kiln {

struct NodeRewrite {
  std::string name;
  std::vector<std::string> tags;
  std::string op_name;                ///< the node op it looks at; empty: every node
  std::optional<ScalarOpId> scalar;   ///< for "Elemwise": only this scalar op
  /// Replacements for the node's outputs (one per output), or nothing.
  std::function<std::optional<VarList>(const FunctionGraph&, const Apply&)> apply;
  /// The replacements' static shapes are facts (constant folding computes the values), so an
  /// unknown length may become a static 1.
  bool exact_shapes = false;

  bool has_tag(const std::string& tag) const;
};

/// A rule from a pattern: when `pattern` matches a node's (single) output and `guard` holds,
/// the output is replaced by `build(match)`.
NodeRewrite pattern_rule(std::string name, std::vector<std::string> tags, pat::Pattern pattern,
                         std::function<Var(const pat::Match&)> build,
                         std::function<bool(const pat::Match&)> guard = {});

/// What a rewrite run did.
struct RewriteStats {
  std::map<std::string, int> applied;  ///< rule name -> times applied
  int rejected = 0;                    ///< replacements refused by the type check
  int visits = 0;
  void merge(const RewriteStats& o);
  int total() const;
};

/// Why a replacement is refused (empty when it is acceptable). Unless `exact_shapes`, an
/// unknown length may not become a static 1 (that would start broadcasting).
std::string replacement_problem(const Variable& old_var, const Variable& new_var, bool exact_shapes = false);

/// Applies `rules` over the whole graph until none fires; a node is revisited when its inputs
/// change. `max_visits` (default: 50 per node) caps runaway rule sets. With `strict`, a refused
/// replacement is an InternalError (tests use it to catch wrong rules).
RewriteStats apply_until_equilibrium(FunctionGraph& fg, const std::vector<const NodeRewrite*>& rules,
                                     bool strict = false, std::size_t max_visits = 0);

}  // namespace kiln
