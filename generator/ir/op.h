// The Op contract (PyTensor's): type inference (make_node), a reference implementation
// (perform), symbolic shapes (infer_shape), gradients (pullback / pushforward), the batching
// rule (vectorize), in-place and view declarations, the inner graphs it holds, and props from
// which equality and hashing derive. Each op family implements it in one file under ops/.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/inner_graph.h"
#include "ir/node.h"

namespace kiln {

using Json = nlohmann::json;

/// Output index -> the input indices it overwrites (destroy_map) or aliases (view_map).
using IndexMap = std::map<int, std::vector<int>>;

/// Symbolic lengths of one variable: one 0-d int64 Var per dimension.
using ShapeVars = std::vector<Var>;

/// The gradient (or tangent) contribution for one input of a node.
struct GradTerm {
  enum class Kind {
    Value,         ///< `value` holds the gradient graph
    Disconnected,  ///< the output does not depend on this input (e.g. an index, a shape)
    Undefined,     ///< mathematically undefined here (e.g. integer input, Argmax); `reason`
    NotImplemented ///< kiln does not know this gradient yet; `reason`
  };
  Kind kind = Kind::Disconnected;
  Var value;
  std::string reason;

  static GradTerm of(Var v) { return {Kind::Value, std::move(v), {}}; }
  static GradTerm disconnected() { return {Kind::Disconnected, nullptr, {}}; }
  static GradTerm undefined(std::string why) { return {Kind::Undefined, nullptr, std::move(why)}; }
  static GradTerm not_implemented(std::string why) {
    return {Kind::NotImplemented, nullptr, std::move(why)};
  }
};

class Op {
 public:
  virtual ~Op() = default;

  /// The PyTensor Op class name, as written in graph files ("Elemwise", "DimShuffle").
  virtual std::string_view name() const = 0;

  /// All props, as written in graph files. Equality and hashing derive from name + props
  /// (+ structure_key()).
  virtual Json props() const { return Json::object(); }

  /// What equality needs beyond props(): the structure of a graph the op holds that the graph
  /// writer, not props(), spells (OpFromGraph's inner graph; ir/graph_key.h). Empty by default.
  virtual std::string structure_key() const { return {}; }

  /// Human-readable form for dprint and messages, e.g. "Add", "DimShuffle{order=[1,0]}".
  virtual std::string str() const;

  /// Type inference: checks the inputs (count, dtypes, ranks, static lengths) and returns the
  /// output types. Errors are UserErrors naming the op and the offending input.
  virtual std::vector<TensorType> infer_types(const VarList& inputs) const = 0;

  /// Reference implementation: computes `outputs` (already sized to the number of outputs,
  /// holding null arrays) from `inputs`, whose dtypes and ranks match the node's input types.
  /// Run-time failures are RuntimeFailures (the evaluator adds the node).
  virtual void perform(const Apply& node, const std::vector<Array>& inputs,
                       std::vector<Array>& outputs) const = 0;

  /// Output shapes as graphs of the input shapes (0-d int64 Vars), one list per output. The
  /// default returns nothing: no formula, so callers use Shape_i of the outputs themselves
  /// ("compute the node to know"; ops/shape.h's output_shapes does that).
  virtual std::vector<ShapeVars> infer_shape(const Apply& node,
                                             const std::vector<ShapeVars>& input_shapes) const;

  /// Vector-Jacobian product: one GradTerm per input given one cotangent per output (a null
  /// Var for an output whose cotangent is zero/disconnected).
  virtual std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const;

  /// Jacobian-vector product: one tangent per output given one tangent per input (null Var for
  /// zero/disconnected tangents). A null result means a zero tangent.
  virtual std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const;

  /// The batching rule (PyTensor's _vectorize_node): the node's outputs computed from
  /// `batched_inputs`, which have leading batch dimensions beyond the node's inputs (at least
  /// one has some). Nothing when the op has no rule (vectorize_graph then batches an op's body,
  /// or fails naming it); an op that cannot batch these particular inputs throws
  /// NotImplementedError (transform/vectorize.h's cannot_vectorize).
  virtual std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const;

  /// The graphs this op holds (ir/inner_graph.h): the one hook through which grad, vectorize,
  /// dprint and codegen reach them. Empty for most ops.
  virtual std::vector<InnerGraphUse> inner_graphs() const { return {}; }
  /// A lazy op (PyTensor's IfElse): for each branch, the input indices read only when that
  /// branch is taken (ir/branch_schedule.h runs each branch's producers only then). Empty — the
  /// default — for an op that reads all its inputs.
  virtual std::vector<std::vector<int>> lazy_branches() const { return {}; }
  /// The branch a lazy op takes, from its inputs; only those outside every branch are defined
  /// (the others may be null arrays). Called only for ops with lazy_branches().
  virtual int select_branch(const std::vector<Array>& /*inputs*/) const { return 0; }
  /// Whether input `index` may be of a non-tensor kind (an rng, a none). Ops that take only
  /// tensors — nearly all — keep the default, and make_node refuses anything else for them.
  virtual bool accepts_kind(int /*index*/, TypeKind kind) const { return kind == TypeKind::Tensor; }
  /// Whether the op computes on complex64/complex128 tensors. Most ops do not yet: make_node
  /// refuses a complex input or output for them as not implemented, naming the op, so no
  /// complex value reaches code written for real numbers.
  virtual bool accepts_complex() const { return false; }

  virtual IndexMap destroy_map() const { return {}; }
  virtual IndexMap view_map() const { return {}; }

  /// False for ops whose result must not become a constant (e.g. a huge Alloc, AllocEmpty).
  virtual bool do_constant_folding(const Apply& /*node*/) const { return true; }

  /// Equality and hashing from name + props (so merging identical nodes works).
  bool equals(const Op& other) const { return this == &other || key() == other.key(); }
  std::size_t hash() const;
  /// name + canonical props text + structure_key() (cached).
  const std::string& key() const;

 private:
  mutable std::string key_;
};

/// A prop value as PyTensor prints it in an op's name (Python's repr: True, None, 'gen', [1, 2]).
std::string prop_repr(const Json& value);

/// PyTensor's make_node: validates inputs with the op's type inference and builds the node.
/// Errors carry the op's name.
ApplyPtr make_node(OpPtr op, VarList inputs);

/// The single output of a one-output op applied to inputs.
Var apply1(OpPtr op, VarList inputs);

/// Throws a UserError "<op>: <msg>" (type inference failures).
[[noreturn]] void type_error(const Op& op, const std::string& msg);

}  // namespace kiln
