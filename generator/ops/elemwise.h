// Elemwise: a scalar op broadcast over its inputs (PyTensor's rules: only dimensions whose
// static length is 1 broadcast; inputs of lower rank are left-padded by ExpandDims nodes that
// the builder inserts).
#pragma once

#include "ir/op.h"
#include "ops/props.h"
#include "ops/scalar/scalar_op.h"

namespace kiln {

class Elemwise : public Op {
 public:
  explicit Elemwise(ScalarOp scalar_op) : scalar_op_(std::move(scalar_op)) {}
  /// An in-place variant: output o overwrites input inplace[o] (kiln's in-place rewrite makes
  /// these for inputs no one reads afterwards; the memory plan gives both one buffer).
  Elemwise(ScalarOp scalar_op, IndexMap inplace) : scalar_op_(std::move(scalar_op)), inplace_(std::move(inplace)) {}
  const ScalarOp& scalar_op() const { return scalar_op_; }
  const IndexMap& inplace_pattern() const { return inplace_; }
  IndexMap destroy_map() const override { return inplace_; }

  std::string_view name() const override { return "Elemwise"; }
  bool accepts_complex() const override { return true; }
  Json props() const override;
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// The scalar op's partial derivatives times the cotangent, summed back over broadcast
  /// dimensions (elemwise_grad.cpp).
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  /// A Composite's scalar graph, as the node's body (grad differentiates through it).
  std::vector<InnerGraphUse> inner_graphs() const override;

 private:
  ScalarOp scalar_op_;
  IndexMap inplace_;
};

/// A Composite's scalar graph as an inner graph (ir/inner_graph.h): applied to tensors, each of
/// its nodes becomes an Elemwise node over them.
class CompositeInnerGraph : public InnerGraph {
 public:
  explicit CompositeInnerGraph(std::shared_ptr<const CompositeGraph> graph) : graph_(std::move(graph)) {}
  const CompositeGraph& composite() const { return *graph_; }
  int num_inputs() const override;
  int num_outputs() const override;
  std::size_t num_nodes() const override;
  VarList apply(const VarList& inputs) const override;

 private:
  std::shared_ptr<const CompositeGraph> graph_;
};

/// The inner graphs of ops whose scalar op may be a Composite (Elemwise, CAReduce): the
/// Composite's, with `is_body` as given; none for other scalar ops.
std::vector<InnerGraphUse> scalar_inner_graphs(const ScalarOp& op, bool is_body);

/// Static output shape of broadcasting input types (PyTensor's broadcast_static_dim_lengths).
/// All types must have the same rank. Throws std::invalid_argument on incompatible lengths.
Shape broadcast_static_shapes(const std::vector<TensorType>& types);

/// Output shape of an Elemwise at run time, refusing runtime broadcasting of dimensions that
/// are not statically 1 (PyTensor's rule). Throws RuntimeFailure.
Shape elemwise_runtime_shape(const std::vector<TensorType>& types, const std::vector<Array>& inputs);

/// Applies a scalar op elementwise, left-padding lower-rank inputs with ExpandDims.
VarList elemwise(const ScalarOp& op, VarList inputs);
/// The single output of elemwise().
Var elemwise1(const ScalarOp& op, VarList inputs);

OpPtr elemwise_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
