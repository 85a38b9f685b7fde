// C++ code for scalar ops: the per-element statements inside generated loops (Elemwise,
// fused reductions). Expressions come from templates/cpp/scalar_ops.txt — the backend's table
// of op -> C++ spelling — and follow the same conversion rules as the reference evaluator
// (ScalarOp::operand_dtypes).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// A backend's spelling of scalar ops: per op name, (operand class, expression) rows in order,
/// as templates/cpp/scalar_ops.txt writes them (its header explains the columns). The first
/// row whose class ("float", "int", "bool", or "any") matches the computation type wins.
class ScalarTable {
 public:
  /// Parses a table in scalar_ops.txt's format; `backend` names it in errors and keeps the rows
  /// whose class is written `class@backend` for it alone (dropping other backends' rows).
  static ScalarTable parse(const std::string& backend, std::string_view text);
  /// The cpp backend's table (templates/cpp/scalar_ops.txt).
  static const ScalarTable& cpp();
  /// This table, for `backend`, with op `name` spelled by `spellings` instead.
  ScalarTable with(const std::string& backend, const std::string& name,
                   std::vector<std::pair<std::string, std::string>> spellings) const;
  /// The expression for `op` computing in `compute`; NotImplementedError when there is none.
  const std::string& expression(const ScalarOp& op, DType compute) const;
  /// Whether the table spells C rather than C++ (a `_cast` row: the GPU dialects, where
  /// conversions are C casts and kiln_convert_* functions instead of kiln_scalar::convert).
  bool c_style() const;
  /// The operand classes `name` is spelled for, in order (none: no spelling).
  std::vector<std::string> classes(const std::string& name) const;

 private:
  std::string backend_;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> rows_;
};

/// `expr` (of dtype `from`) converted to `to` as `table` spells it: kiln_scalar::convert in C++;
/// a C-style table (the GPU dialects) casts, tests bools against zero, and saturates float ->
/// integer conversions with kiln_convert_* (templates/gpu/scalar_math.h).
std::string convert_scalar(const std::string& expr, DType from, DType to, const ScalarTable& table);

struct ScalarCode {
  std::string statements;            ///< C++ statements, one per line
  std::vector<std::string> results;  ///< an expression (usually a temporary) per output
};

/// Emits `op` applied to `args` (C++ expressions of dtypes `arg_dtypes`) as `table` spells it.
/// Temporaries are named `<prefix>0`, `<prefix>1`, ...; `counter` carries the numbering across
/// calls.
ScalarCode emit_scalar_code(const ScalarOp& op, const std::vector<std::string>& args,
                            const std::vector<DType>& arg_dtypes, const std::string& prefix,
                            int& counter, const ScalarTable& table = ScalarTable::cpp());

/// Statements ending in `return <expr>;` (each line indented by four spaces, no final newline):
/// `op` of `args` (of `dtypes`) after the statements `before` — the body of a fold lambda.
std::string scalar_return(const ScalarOp& op, const std::vector<std::string>& args,
                          const std::vector<DType>& dtypes, const std::string& before = "");

/// The value a fold by `id` starts from, as a C++ expression of type A (the accumulator).
std::string fold_identity(ScalarOpId id, DType acc);


}  // namespace kiln
