#include "rewrite/database.h"

#include <algorithm>

#include "rewrite/constant_folding.h"

namespace kiln {

const std::vector<NodeRewrite>& all_node_rewrites() {
  static const std::vector<NodeRewrite> all = [] {
    std::vector<NodeRewrite> rules;
    auto add = [&](std::vector<NodeRewrite> more) {
      for (auto& r : more) rules.push_back(std::move(r));
    };
    rules.push_back(constant_folding_rule());
    add(canonicalize_elemwise_rules());
    add(canonicalize_shape_rules());
    add(stabilize_rules());
    add(specialize_rules());
    add(linalg_rules());
    add(ifelse_rules());
    add(scan_rules());
    add(scan_push_out_rules());
    return rules;
  }();
  return all;
}

std::vector<const NodeRewrite*> select_rewrites(const std::string& tag, const std::vector<std::string>& include,
                                                const std::vector<std::string>& exclude) {
  std::vector<const NodeRewrite*> out;
  for (const auto& r : all_node_rewrites()) {
    if (!tag.empty() && !r.has_tag(tag)) continue;
    bool included = include.empty();
    for (const auto& t : include) included = included || r.has_tag(t) || r.name == t;
    bool excluded = false;
    for (const auto& t : exclude) excluded = excluded || r.has_tag(t) || r.name == t;
    if (included && !excluded) out.push_back(&r);
  }
  return out;
}

}  // namespace kiln
