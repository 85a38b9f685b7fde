// CheckAndRaise{msg, exc_type}(x, *conds) and Assert{msg}(x, *conds): x passes through (as a
// view) when every element of every condition is true; otherwise the call fails with `msg`.
// The message and exception name are data from the graph: kept exactly as given.
#pragma once

#include <string>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class CheckAndRaise : public Op {
 public:
  /// `exc_type` names the exception PyTensor would raise ("AssertionError", "ValueError").
  CheckAndRaise(std::string msg, std::string exc_type);
  const std::string& msg() const { return msg_; }
  const std::string& exc_type() const { return exc_type_; }

  std::string_view name() const override { return "CheckAndRaise"; }
  Json props() const override { return Json{{"msg", msg_}, {"exc_type", exc_type_}}; }
  /// PyTensor's form: CheckAndRaise{raises=ValueError, msg='...'} (msg cut to 30 characters).
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
  /// Folded only when every condition is a constant that holds (as PyTensor): a failing check
  /// must stay in the graph and fail at run time.
  bool do_constant_folding(const Apply& node) const override;

 protected:
  /// The message cut as PyTensor prints it (27 characters and "..." beyond 30).
  std::string short_msg() const;

 private:
  std::string msg_;
  std::string exc_type_;
};

/// Assert{msg}: CheckAndRaise raising AssertionError.
class Assert : public CheckAndRaise {
 public:
  explicit Assert(std::string msg) : CheckAndRaise(std::move(msg), "AssertionError") {}
  std::string_view name() const override { return "Assert"; }
  Json props() const override { return Json{{"msg", msg()}}; }
  /// Assert{msg='...'}.
  std::string str() const override;
};

/// x, checked at run time: fails with "<exc_type>: <msg>" unless every element of every
/// condition is true (nonzero).
Var check_and_raise(const Var& x, const VarList& conds, const std::string& msg,
                    const std::string& exc_type = "AssertionError");
/// check_and_raise with AssertionError, as an Assert node.
Var assert_op(const Var& x, const VarList& conds, const std::string& msg);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr check_and_raise_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr assert_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
