// ExtractDiag (np.diagonal; its output is a view of the input) and AllocDiag (its inverse:
// zeros with the input laid along a diagonal of two new axes).
#pragma once

#include <cstdint>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// ExtractDiag{offset, axis1, axis2}(x) = np.diagonal(x, offset, axis1, axis2): the two axes
/// are removed and the diagonal becomes the last axis. Axes are non-negative and distinct; they
/// are stored sorted (swapping them negates the offset, which describes the same diagonal).
class ExtractDiag : public Op {
 public:
  ExtractDiag(std::int64_t offset, int axis1, int axis2);
  std::int64_t offset() const { return offset_; }
  int axis1() const { return axis1_; }
  int axis2() const { return axis2_; }
  std::string_view name() const override { return "ExtractDiag"; }
  Json props() const override {
    return Json{{"offset", offset_}, {"axis1", axis1_}, {"axis2", axis2_}};
  }
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  IndexMap view_map() const override { return {{0, {0}}}; }

 private:
  std::int64_t offset_;
  int axis1_, axis2_;
};

/// AllocDiag{offset, axis1, axis2}(x): zeros of rank x.ndim + 1, with x's last axis laid along
/// the `offset` diagonal of the two output axes axis1 < axis2 (each of length
/// x.shape[-1] + |offset|); x's other axes fill the remaining output positions in order.
/// np.diagonal(result, offset, axis1, axis2) gives x back.
class AllocDiag : public Op {
 public:
  AllocDiag(std::int64_t offset, int axis1, int axis2);
  std::int64_t offset() const { return offset_; }
  int axis1() const { return axis1_; }
  int axis2() const { return axis2_; }
  std::string_view name() const override { return "AllocDiag"; }
  Json props() const override {
    return Json{{"offset", offset_}, {"axis1", axis1_}, {"axis2", axis2_}};
  }
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  std::int64_t offset_;
  int axis1_, axis2_;
};

/// np.diagonal(x, offset, axis1, axis2); negative axes count from the end.
Var diagonal(const Var& x, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1);
/// PyTensor's alloc_diag: `diag`'s last axis on the `offset` diagonal of two new axes at
/// positions axis1, axis2 of the result (negative axes count from the end of the result; the
/// two are sorted, the offset kept).
Var alloc_diag(const Var& diag, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr extract_diag_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr alloc_diag_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
