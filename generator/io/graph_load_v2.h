// The parts of graph loading that version 2 of the format brought (GRAPH_FORMAT.md, "Version
// 2"): the gate that refuses v2-only constructs in a version-1 file, the identity wrappers
// (ViewOp, DeepCopyOp, ...) that mean their input, and the normalisation of PyTensor 2.26
// spellings whose axis is an input (Join, Split) into the 3.x form kiln keeps internally.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/node.h"

namespace kiln {

/// Refuses, in a version-1 file, every construct version 2 added: non-tensor types and the
/// reserved dtypes, the new op names and scalar op names, and the 3.x props (Join{axis},
/// ExpandDims{axes}, a Softmax axis list, the new ignored props, inner graphs, integer
/// literals in Blockwise signatures). The UserError names the JSON pointer and says that the
/// construct needs version 2.
void refuse_version_2_constructs(const nlohmann::json& root);

/// Ops that mean their (single) input: ViewOp, DeepCopyOp, OutputGuard, SpecifyAssumptions,
/// TensorFromScalar, ScalarFromTensor.
bool is_identity_wrapper(std::string_view op);

/// Checks an identity wrapper node (its props, its one input) and returns the variable its
/// output stands for (the input). `declared` is the output's declared type, which must agree
/// with the input's (and not be more specific); `pointer` is the node's JSON pointer.
Var identity_wrapper_output(const std::string& op, const nlohmann::json& props, const VarList& inputs,
                            const TensorType& declared, const std::string& pointer);

/// Ops the format (version 2) names that this kiln does not know: refused as not implemented
/// rather than as unknown.
bool is_format_version_2_op(std::string_view op);

/// A node as written in the file, before its op is made: the loader may rewrite it into the
/// spelling kiln keeps (PyTensor 3.x's).
struct NodeSpelling {
  std::string op;
  nlohmann::json props;  ///< an object
  VarList inputs;
};

/// PyTensor 2.26's Join(axis, *tensors) and Split{n}(x, axis, sizes) whose axis input is a
/// constant become Join{axis}(*tensors) and Split{n, axis}(x, sizes) (the axis normalised to
/// be non-negative). A run-time axis, or one out of range (which type inference then refuses
/// in its own words), stays an input.
void normalize_node(NodeSpelling& node);

}  // namespace kiln
