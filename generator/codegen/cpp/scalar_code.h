// C++ code for scalar ops: the per-element statements inside generated loops (Elemwise,
// fused reductions). Expressions come from templates/cpp/scalar_ops.txt — the backend's table
// of op -> C++ spelling — and follow the same conversion rules as the reference evaluator
// (ScalarOp::operand_dtypes).
#pragma once

#include <string>
#include <vector>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

struct ScalarCode {
  std::string statements;            ///< C++ statements, one per line
  std::vector<std::string> results;  ///< an expression (usually a temporary) per output
};

/// Emits `op` applied to `args` (C++ expressions of dtypes `arg_dtypes`). Temporaries are
/// named `<prefix>0`, `<prefix>1`, ...; `counter` carries the numbering across calls.
ScalarCode emit_scalar_code(const ScalarOp& op, const std::vector<std::string>& args,
                            const std::vector<DType>& arg_dtypes, const std::string& prefix,
                            int& counter);

/// Statements ending in `return <expr>;` (each line indented by four spaces, no final newline):
/// `op` of `args` (of `dtypes`) after the statements `before` — the body of a fold lambda.
std::string scalar_return(const ScalarOp& op, const std::vector<std::string>& args,
                          const std::vector<DType>& dtypes, const std::string& before = "");

/// The value a fold by `id` starts from, as a C++ expression of type A (the accumulator).
std::string fold_identity(ScalarOpId id, DType acc);

/// The operand classes ("float", "int", "bool", "any") the backend's table spells scalar op
/// `name` for, in table order; empty when it has no spelling (Composite has none: its inner
/// nodes are spelled one by one).
std::vector<std::string> cpp_scalar_operand_classes(const std::string& name);

/// A C++ literal for a 0-d value of any dtype (exact: hex floats, explicit casts).
std::string scalar_literal(const Array& value0d);

}  // namespace kiln
