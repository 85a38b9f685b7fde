#include "rewrite/merge.h"

#include <cstring>
#include <functional>
#include <unordered_map>

namespace kiln {

namespace {

std::string constant_key(const Variable& v) {
  const Array& a = v.value();
  std::string key(dtype_name(a.dtype()));
  key += shape_str(a.shape());
  key.append(static_cast<const char*>(a.data()), a.nbytes());
  return key;
}

}  // namespace

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
  std::unordered_map<std::string, Apply*> seen;
  for (Apply* node : fg.toposort()) {
    if (!fg.contains(node)) continue;
    std::string key = node->op().key();
    for (const auto& in : node->inputs()) {
      key += '|';
      key += std::to_string(reinterpret_cast<std::uintptr_t>(in.get()));
    }
    auto [it, fresh] = seen.emplace(key, node);
    if (fresh || it->second == node) continue;
    Apply* keep = it->second;
    bool ok = true;
    for (int o = 0; o < node->num_outputs() && ok; ++o)
      ok = replacement_problem(*node->output_ptr(o), *keep->output_ptr(o), true).empty();
    if (!ok) continue;
    std::vector<std::pair<Var, Var>> pairs;
    for (int o = 0; o < node->num_outputs(); ++o) pairs.emplace_back(node->output(o), keep->output(o));
    fg.replace_all(pairs, "merge");
    ++stats.applied["merge"];
  }
  return stats;
}

}  // namespace kiln
