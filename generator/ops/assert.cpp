#include "ops/assert.h"

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/grad_util.h"

namespace kiln {

namespace {

// True when every element of `a` is nonzero (NaN counts as true, as a cast to bool does).
bool all_true(const Array& a) {
  bool ok = true;
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    a.for_each_index([&](const std::int64_t* idx) {
      if (ok && !kiln_scalar::convert<bool>(*static_cast<const T*>(a.element_ptr(idx)))) ok = false;
    });
  });
  return ok;
}

// Python's len() counts code points: the byte length of the first n code points of UTF-8 text.
std::size_t utf8_prefix_bytes(const std::string& s, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (count++ == n) return i;
  }
  return s.size();
}

std::size_t utf8_length(const std::string& s) {
  std::size_t count = 0;
  for (char c : s) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

}  // namespace

CheckAndRaise::CheckAndRaise(std::string msg, std::string exc_type)
    : msg_(std::move(msg)), exc_type_(std::move(exc_type)) {
  if (exc_type_.empty()) throw UserError("CheckAndRaise: the exception type name is empty");
}

std::string CheckAndRaise::short_msg() const {
  if (utf8_length(msg_) <= 30) return msg_;
  return msg_.substr(0, utf8_prefix_bytes(msg_, 27)) + "...";
}

std::string CheckAndRaise::str() const {
  return "CheckAndRaise{raises=" + exc_type_ + ", msg='" + short_msg() + "'}";
}

std::string Assert::str() const { return "Assert{msg='" + short_msg() + "'}"; }

std::vector<TensorType> CheckAndRaise::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "takes the value to pass through, then the conditions");
  return {inputs[0]->type()};
}

void CheckAndRaise::perform(const Apply&, const std::vector<Array>& inputs,
                            std::vector<Array>& outputs) const {
  for (std::size_t i = 1; i < inputs.size(); ++i)
    if (!all_true(inputs[i])) throw RuntimeFailure(exc_type_ + (msg_.empty() ? "" : ": " + msg_));
  outputs[0] = inputs[0];
}

std::vector<ShapeVars> CheckAndRaise::infer_shape(
    const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

bool CheckAndRaise::do_constant_folding(const Apply& node) const {
  for (int i = 1; i < node.num_inputs(); ++i) {
    const Var& c = node.input(i);
    if (!c->is_constant() || !all_true(c->value())) return false;
  }
  return true;
}

Var check_and_raise(const Var& x, const VarList& conds, const std::string& msg,
                    const std::string& exc_type) {
  VarList inputs{x};
  inputs.insert(inputs.end(), conds.begin(), conds.end());
  return apply1(std::make_shared<CheckAndRaise>(msg, exc_type), inputs);
}

Var assert_op(const Var& x, const VarList& conds, const std::string& msg) {
  VarList inputs{x};
  inputs.insert(inputs.end(), conds.begin(), conds.end());
  return apply1(std::make_shared<Assert>(msg), inputs);
}

namespace {
std::string optional_string(PropReader& props, const std::string& key, const std::string& dflt) {
  if (props.has(key)) return props.get_string(key);
  props.raw(key);  // absent or null: the default
  return dflt;
}
}  // namespace

OpPtr check_and_raise_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::string msg = optional_string(props, "msg", "");
  std::string exc_type = props.get_string("exc_type");
  props.finish();
  if (exc_type.empty())
    props.fail("exc_type", "must name an exception class, e.g. \"AssertionError\"");
  return std::make_shared<CheckAndRaise>(msg, exc_type);
}

OpPtr assert_from_props(PropReader& props, const std::vector<TensorType>&) {
  // PyTensor's Assert default message; an exporter may also write exc_type (always AssertionError).
  std::string msg = optional_string(props, "msg", "PyTensor Assert failed!");
  std::string exc_type = optional_string(props, "exc_type", "AssertionError");
  props.finish();
  if (exc_type != "AssertionError")
    props.fail("exc_type",
               "of an Assert can only be \"AssertionError\" (use CheckAndRaise), not \"" +
                   exc_type + "\"");
  return std::make_shared<Assert>(msg);
}

// --- gradients: the check passes its input through ---------------------------------------------

std::vector<GradTerm> CheckAndRaise::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  terms[0] = GradTerm::of(cast_grad(output_grads[0], node.input(0)->dtype()));
  return terms;
}

std::vector<GradTerm> CheckAndRaise::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> CheckAndRaise::vectorize(const Apply& node, const VarList& batched_inputs) const {
  return make_node(node.op_ptr(), batched_inputs)->outputs();  // conditions of any shape are checked whole
}

}  // namespace kiln
