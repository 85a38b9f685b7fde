// IfElse rewrites (PyTensor's cond_remove_identical, and the branch choice of a constant
// condition): both drop the IfElse; with a constant condition the other branch's nodes are
// pruned unevaluated.
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/ifelse.h"
#include "rewrite/database.h"

namespace kiln {

namespace {

// The taken branch's values as the node's replacements.
VarList branch_values(const Apply& node, const IfElse& op, int branch) {
  VarList out;
  for (int i = 0; i < op.n_outs(); ++i) out.push_back(node.input(op.branch_input(branch, i)));
  return out;
}

}  // namespace

std::vector<NodeRewrite> ifelse_rules() {
  NodeRewrite constant;
  constant.name = "ifelse_constant_condition";
  constant.tags = {"canonicalize"};
  constant.op_name = "IfElse";
  constant.apply = [](const FunctionGraph&, const Apply& node) -> std::optional<VarList> {
    const Var& cond = node.input(0);
    if (!cond->is_constant()) return std::nullopt;
    const auto& op = static_cast<const IfElse&>(node.op());
    return branch_values(node, op, op.select_branch({cond->value()}));
  };
  NodeRewrite identical;
  identical.name = "ifelse_identical_branches";
  identical.tags = {"canonicalize"};
  identical.op_name = "IfElse";
  identical.apply = [](const FunctionGraph&, const Apply& node) -> std::optional<VarList> {
    const auto& op = static_cast<const IfElse&>(node.op());
    for (int i = 0; i < op.n_outs(); ++i)
      if (node.input(op.branch_input(0, i)) != node.input(op.branch_input(1, i))) return std::nullopt;
    return branch_values(node, op, 0);
  };
  return {constant, identical};
}

}  // namespace kiln
