#include "rewrite/rewriter.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ops/elemwise.h"

namespace kiln {

bool NodeRewrite::has_tag(const std::string& tag) const {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

NodeRewrite pattern_rule(std::string name, std::vector<std::string> tags, pat::Pattern pattern,
                         std::function<Var(const pat::Match&)> build,
                         std::function<bool(const pat::Match&)> guard) {
  NodeRewrite r;
  r.name = std::move(name);
  r.tags = std::move(tags);
  r.scalar = pattern.scalar_op();
  r.op_name = r.scalar ? "Elemwise" : pattern.op_name();
  r.apply = [pattern = std::move(pattern), build = std::move(build), guard = std::move(guard)](
                const FunctionGraph&, const Apply& node) -> std::optional<VarList> {
    if (node.num_outputs() != 1) return std::nullopt;
    pat::Match m;
    m.root = const_cast<Apply*>(&node);
    if (!pattern.match(node.output(0), m)) return std::nullopt;
    if (guard && !guard(m)) return std::nullopt;
    Var out = build(m);
    if (!out) return std::nullopt;
    return VarList{out};
  };
  return r;
}

void RewriteStats::merge(const RewriteStats& o) {
  for (const auto& [k, v] : o.applied) applied[k] += v;
  rejected += o.rejected;
  visits += o.visits;
}

int RewriteStats::total() const {
  int n = 0;
  for (const auto& [k, v] : applied) n += v;
  return n;
}

std::string replacement_problem(const Variable& old_var, const Variable& new_var, bool exact_shapes) {
  const TensorType& a = old_var.type();
  const TensorType& b = new_var.type();
  if (a.kind != b.kind)
    return std::string(type_kind_name(b.kind)) + " instead of " + std::string(type_kind_name(a.kind));
  if (a.dtype != b.dtype)
    return "dtype " + std::string(dtype_name(b.dtype)) + " instead of " + std::string(dtype_name(a.dtype));
  if (a.ndim() != b.ndim()) return "rank " + std::to_string(b.ndim()) + " instead of " + std::to_string(a.ndim());
  if (!a.compatible_with(b)) return "shape " + b.shape_str() + " conflicts with " + a.shape_str();
  for (int d = 0; d < a.ndim(); ++d) {
    // A length known only at run time must not become a static 1: that would broadcast.
    if (!exact_shapes && a.shape[static_cast<std::size_t>(d)] == kUnknownLength && b.broadcastable(d))
      return "dimension " + std::to_string(d) + " becomes statically 1 (" + b.shape_str() + " for " + a.shape_str() + ")";
    if (a.broadcastable(d) && !b.broadcastable(d))
      return "dimension " + std::to_string(d) + " is no longer statically 1 (" + b.shape_str() + " for " +
             a.shape_str() + ")";
  }
  return "";
}

namespace {

bool tracks(const NodeRewrite& r, const Apply& node) {
  if (r.op_name.empty()) return true;
  if (node.op().name() != r.op_name) return false;
  if (r.scalar) return static_cast<const Elemwise&>(node.op()).scalar_op().id() == *r.scalar;
  return true;
}

}  // namespace

RewriteStats apply_until_equilibrium(FunctionGraph& fg, const std::vector<const NodeRewrite*>& rules, bool strict,
                                     std::size_t max_visits) {
  RewriteStats stats;
  std::deque<Apply*> work;
  std::unordered_set<Apply*> queued;
  auto push = [&](Apply* n) {
    if (n && queued.insert(n).second) work.push_back(n);
  };
  for (Apply* n : fg.toposort()) push(n);
  if (max_visits == 0) max_visits = 50 * (fg.num_nodes() + 16);
  // Nodes a replacement brings in, and the users of replaced values, get (re)visited.
  fg.set_import_listener([&](Apply* n) { push(n); });
  struct Reset {
    FunctionGraph& g;
    ~Reset() { g.set_import_listener({}); }
  } reset{fg};

  while (!work.empty()) {
    if (static_cast<std::size_t>(stats.visits) >= max_visits) break;
    Apply* node = work.front();
    work.pop_front();
    queued.erase(node);
    if (!fg.contains(node)) continue;
    ++stats.visits;
    for (const NodeRewrite* rule : rules) {
      if (!tracks(*rule, *node)) continue;
      std::optional<VarList> result = rule->apply(fg, *node);
      if (!result) continue;
      if (static_cast<int>(result->size()) != node->num_outputs())
        throw InternalError("rewrite " + rule->name + " returned " + std::to_string(result->size()) +
                            " replacements for " + node->label());
      std::string problem;
      for (int o = 0; o < node->num_outputs() && problem.empty(); ++o) {
        const Var& r = (*result)[static_cast<std::size_t>(o)];
        if (!r) continue;
        problem = replacement_problem(*node->output_ptr(o), *r, rule->exact_shapes);
      }
      if (!problem.empty()) {
        ++stats.rejected;
        if (strict) throw InternalError("rewrite " + rule->name + " on " + node->label() + " gives " + problem);
        continue;
      }
      std::vector<std::pair<Var, Var>> pairs;
      std::vector<Apply*> users;
      for (int o = 0; o < node->num_outputs(); ++o) {
        const Var& r = (*result)[static_cast<std::size_t>(o)];
        if (!r || r.get() == node->output_ptr(o)) continue;
        for (const Client& c : fg.clients(node->output_ptr(o)))
          if (c.node) users.push_back(c.node);
        pairs.emplace_back(node->output(o), r);
      }
      if (pairs.empty()) continue;
      fg.replace_all(pairs, rule->name);
      for (Apply* u : users) push(u);
      ++stats.applied[rule->name];
      break;  // the node is gone (or no longer what the rules saw)
    }
  }
  return stats;
}

}  // namespace kiln
