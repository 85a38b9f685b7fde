#include "rewrite/merge.h"

#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/graph_key.h"
#include "ops/random.h"

namespace kiln {

RewriteStats merge_duplicates(FunctionGraph& fg) {
  RewriteStats stats;
  // Constants first: later node keys then see one variable per value.
  std::unordered_map<std::string, Var> constants;
  for (Variable* v : fg.variables()) {
    if (!v->is_constant()) continue;
    Var handle = fg.handle(v);
    auto [it, fresh] = constants.emplace(constant_key(*v), handle);
    if (fresh || it->second == handle) continue;
    if (!replacement_problem(*v, *it->second, true).empty()) continue;
    fg.replace(handle, it->second, "merge constants");
    ++stats.applied["merge_constants"];
  }
  // Nodes are bucketed by op name and inputs; props (Op::key, which can be a whole Composite's
  // text) are only compared when two nodes share a bucket.
  auto shallow_hash = [](const Apply* n) {
    std::size_t h = std::hash<std::string_view>()(n->op().name());
    for (const auto& in : n->inputs()) h = h * 1000003u ^ std::hash<const void*>()(in.get());
    return h;
  };
  auto same = [](const Apply* a, const Apply* b) {
    if (a->num_inputs() != b->num_inputs() || a->num_outputs() != b->num_outputs()) return false;
    for (int i = 0; i < a->num_inputs(); ++i)
      if (a->input(i).get() != b->input(i).get()) return false;
    return a->op().equals(b->op());
  };
  std::unordered_map<std::size_t, std::vector<Apply*>> seen;
  for (Apply* node : fg.toposort()) {
    if (!fg.contains(node)) continue;
    if (is_impure(node->op())) continue;  // two draws are two draws, whatever their inputs
    auto& bucket = seen[shallow_hash(node)];
    Apply* keep = nullptr;
    for (Apply* other : bucket)
      if (!keep && fg.contains(other) && same(other, node)) keep = other;
    if (!keep) {
      bucket.push_back(node);
      continue;
    }
    bool ok = true;
    for (int o = 0; o < node->num_outputs() && ok; ++o)
      ok = replacement_problem(*node->output_ptr(o), *keep->output_ptr(o), true).empty();
    if (!ok) continue;
    std::vector<std::pair<Var, Var>> pairs;
    for (int o = 0; o < node->num_outputs(); ++o) pairs.emplace_back(node->output(o), keep->output(o));
    keep->set_origins(merge_origins(keep->origins(), node->origins()));  // it now stands for both
    fg.replace_all(pairs, "merge");
    ++stats.applied["merge"];
  }
  return stats;
}

}  // namespace kiln
