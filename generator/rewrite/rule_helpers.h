// Small helpers the rewrite families share.
#pragma once

#include <string>
#include <vector>

#include "ir/fgraph.h"
#include "ops/elemwise.h"
#include "rewrite/rewriter.h"

namespace kiln {

/// The tags of rules in the "canonicalize" phase.
inline const std::vector<std::string> kCanonicalizeTags = {"canonicalize"};

/// The Elemwise op of a node, or null when the node is something else.
const Elemwise* elemwise_op(const Apply* node);
/// True when `v` is computed by an Elemwise of scalar op `id`.
bool is_elemwise(const Var& v, ScalarOpId id);

/// `v` converted to `dtype` (v itself when it has it already).
Var cast_to(const Var& v, DType dtype);
/// `v` made to have exactly `like`'s type where possible: a cast for the dtype (shapes are left
/// to the replacement check, which refuses a broadcasting change).
Var match_dtype(const Var& v, const Variable& like);

/// A constant of `like`'s dtype and rank, every length 1, holding `value` (for broadcasting).
Var broadcastable_constant(double value, const Variable& like);

/// A deterministic ordering key for the inputs of commutative ops: inputs by position,
/// constants by value, node outputs by structure (to `depth` levels). Independent of pointers.
std::string order_key(const FunctionGraph& fg, const Var& v, int depth = 3);

/// Number of clients `v` has in `fg` (graph outputs count).
std::size_t client_count(const FunctionGraph& fg, const Var& v);

/// `rule` restricted to nodes with no complex input or output: for identities of real numbers
/// (log(exp(x)) = x, sqrt(sqr(x)) = |x|, -1 * x = -x to the sign of a zero) and rewrites into ops
/// that take no complex operands.
NodeRewrite real_numbers_only(NodeRewrite rule);

}  // namespace kiln
