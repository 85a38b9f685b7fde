// The one list of every local rewrite kiln has, each with its tags (database.cpp), gathered
// from the rewrite families (one file each: canonicalize_*.cpp, stabilize.cpp, ...).
#pragma once

#include <string>
#include <vector>

#include "rewrite/rewriter.h"

namespace kiln {

const std::vector<NodeRewrite>& all_node_rewrites();

/// The rewrites that bear `tag` and pass the include/exclude selection.
std::vector<const NodeRewrite*> select_rewrites(const std::string& tag, const std::vector<std::string>& include,
                                                const std::vector<std::string>& exclude);

// Rule families (each defined in its own file).
std::vector<NodeRewrite> canonicalize_elemwise_rules();
std::vector<NodeRewrite> canonicalize_shape_rules();
std::vector<NodeRewrite> stabilize_rules();
std::vector<NodeRewrite> specialize_rules();
std::vector<NodeRewrite> linalg_rules();
/// IfElse with a constant condition or identical branches (rewrite/ifelse.cpp).
std::vector<NodeRewrite> ifelse_rules();
/// PyTensor's scan_save_mem for outputs read only as out[-1] (rewrite/scan_save_mem.cpp).
std::vector<NodeRewrite> scan_rules();
/// scan_push_out_seq (rewrite/scan_push_out.cpp).
std::vector<NodeRewrite> scan_push_out_rules();

}  // namespace kiln
