// OpFromGraph: an op defined by an inner graph (PyTensor's pytensor.compile.builders
// .OpFromGraph, and what an exporter writes for its subclasses — FusedElemwise,
// BlockwiseWithCoreShape, 3.x's symbolic Softmax, KroneckerProduct, Pad, Einsum, ...). The
// node's inputs map to the inner graph's inputs in order, its outputs to the inner outputs.
//
// kiln inlines every OpFromGraph before rewriting (rewrite/inline_op_from_graph.h), so the
// rewrites and the code generator never see one; until then the op is a full op: type
// inference against the inner inputs, perform (the reference evaluator on the inner graph),
// infer_shape; its inner graph is its body (Op::inner_graphs, ir/inner_graph.h), through which
// grad differentiates it and vectorize_graph batches it.
#pragma once

#include <memory>
#include <string>

#include "ir/fgraph.h"
#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class OpFromGraph : public Op {
 public:
  /// `label` is PyTensor's name for it (the `name` prop: a subclass or a given name).
  OpFromGraph(std::string label, std::shared_ptr<const FunctionGraph> inner);

  /// The `name` prop.
  const std::string& label() const { return label_; }
  /// The inner graph (the op's definition); grad and vectorize_graph reach it through
  /// inner_graphs(), dprint prints it from here.
  const FunctionGraph& inner_graph() const { return *inner_; }
  const std::shared_ptr<const FunctionGraph>& inner_graph_ptr() const { return inner_; }

  std::string_view name() const override { return "OpFromGraph"; }
  /// {"name": label}; the graph writer adds "inner" (io/graph_save.cpp), and equality
  /// compares the inner graph through structure_key().
  Json props() const override;
  std::string structure_key() const override;
  /// PyTensor's form: "<name>{inline=False}".
  std::string str() const override;
  /// Any kind: infer_types checks each input against the inner graph's.
  bool accepts_kind(int index, TypeKind kind) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// The inner graph, as the node's body.
  std::vector<InnerGraphUse> inner_graphs() const override;

 private:
  std::string label_;
  std::shared_ptr<const FunctionGraph> inner_;
};

/// The inner graph applied to `inputs` (one per inner input, compatible types): its nodes
/// rebuilt on them with make_node, its constants shared. Returns the variables standing for
/// the inner outputs; `nodes`, if given, receives the new nodes in the inner toposort order.
VarList apply_inner_graph(const FunctionGraph& inner, const VarList& inputs, std::vector<Apply*>* nodes = nullptr);

/// The op applied to inputs (the builder API); its outputs.
VarList op_from_graph(std::string label, std::shared_ptr<const FunctionGraph> inner, const VarList& inputs);

/// Graph-file factory (registered in ops/op_table.cpp): props `name` (a string) and `inner` (a
/// graph object with its own id scope, loaded through the PropReader's inner-graph loader).
OpPtr op_from_graph_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
