// Blockwise: a core op looped over leading batch dimensions, described by a gufunc signature
// such as "(m,k),(k,n)->(m,n)" (PyTensor's Blockwise, NumPy's generalized ufuncs).
//
// Every input has the same number of batch dimensions (the builder left-pads with ExpandDims,
// as PyTensor's make_node does); batch dimensions broadcast like Elemwise: only dimensions of
// static length 1 broadcast. Core dimensions with one name must have one length. perform calls
// the core op's perform on views of each batch element.
//
// The design is general, but kiln only loops core ops it has checked for it (Dot, Dot22 and
// the linear-algebra ops of ops/linalg/, whose signature must be their own up to renaming);
// any other core op is a NotImplementedError naming it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// A parsed gufunc signature: the core dimension names of each input and output.
struct GufuncSignature {
  std::vector<std::vector<std::string>> inputs;
  std::vector<std::vector<std::string>> outputs;

  /// Parses NumPy's grammar ("(m,k),(k,n)->(m,n)", "(n),(n)->()"); whitespace is ignored.
  /// A malformed text is a UserError that says what is wrong and where.
  static GufuncSignature parse(const std::string& text);
  /// The canonical text (no whitespace).
  std::string str() const;
  /// The length an integer-literal dimension fixes ("3" -> 3); nullopt for a name.
  static std::optional<std::int64_t> literal_length(const std::string& dim);
};

class Blockwise : public Op {
 public:
  /// Throws NotImplementedError when kiln cannot loop `core_op` yet, and UserError when the
  /// signature is malformed or does not fit the core op.
  Blockwise(OpPtr core_op, const std::string& signature);

  const Op& core_op() const { return *core_op_; }
  const OpPtr& core_op_ptr() const { return core_op_; }
  const GufuncSignature& signature() const { return signature_; }
  /// Number of leading batch dimensions of a node of this op.
  int batch_ndim(const Apply& node) const;

  std::string_view name() const override { return "Blockwise"; }
  bool accepts_complex() const override { return core_op_->accepts_complex(); }
  Json props() const override;
  /// PyTensor's form: "Blockwise{Dot, (m,k),(k,n)->(m,n)}".
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  OpPtr core_op_;
  GufuncSignature signature_;
};

/// Names of the core ops kiln can loop in a Blockwise.
const std::vector<std::string>& blockwise_core_ops();

/// Applies `core_op` over the batch dimensions of `inputs` (inputs with fewer batch dimensions
/// than the others are left-padded with ExpandDims).
VarList blockwise(OpPtr core_op, const std::string& signature, VarList inputs);
/// The single output of blockwise().
Var blockwise1(OpPtr core_op, const std::string& signature, VarList inputs);

/// Props `core_op` ({"op": ..., "props": ...}) and `signature`; errors name
/// /nodes/N/props/core_op or /nodes/N/props/signature.
OpPtr blockwise_from_props(PropReader& props, const std::vector<TensorType>& input_types);

/// Whether a Blockwise node's props name a core op kiln loops (or are malformed, which
/// blockwise_from_props reports). The loader expands a Blockwise over any other op it knows
/// with blockwise_by_vectorize.
bool blockwise_core_is_looped(const Json& props);

/// A Blockwise over a core op kiln does not loop but can batch (PyTensor leaves
/// Blockwise{Subtensor}, Blockwise{AdvancedSubtensor} with batched indices, Blockwise{Join}...
/// where its own rules give up): the core op's batching rule (vectorize_node) applied to
/// `inputs`, so the graph holds ordinary ops. A core op whose rule cannot batch these inputs is
/// a NotImplementedError naming it and the rule's reason.
VarList blockwise_by_vectorize(PropReader& props, const VarList& inputs);

}  // namespace kiln
