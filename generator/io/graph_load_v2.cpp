#include "io/graph_load_v2.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/props.h"

namespace kiln {

using Json = nlohmann::json;

namespace {

// --- what version 2 added ---------------------------------------------------------------------

// Op names only version 2 has: inner graphs, the new DimShuffle spelling, the identity
// wrappers, complex-valued Eig, the ops of the "Control flow" section and PyTensor's
// ChoiceWithoutReplacement. The other RandomVariables (every class name ending in "RV") are
// recognised by is_random_variable. The ops of the "More ops"
// table (Cholesky, LU, SortOp, Repeat, ...) are accepted in version-1 files too: PyTensor 2.26
// has them with the same class names and props, so a 2.26 graph holds them with one meaning.
const std::set<std::string, std::less<>>& version_2_ops() {
  static const std::set<std::string, std::less<>> ops = {
      "OpFromGraph", "MatrixTranspose", "ViewOp", "DeepCopyOp", "OutputGuard", "SpecifyAssumptions",
      "TensorFromScalar", "ScalarFromTensor", "Eig", "IfElse", "Scan", "ChoiceWithoutReplacement"};
  return ops;
}

bool is_random_variable(std::string_view op) {
  return op.size() > 2 && op.substr(op.size() - 2) == "RV" && std::isupper(static_cast<unsigned char>(op[0]));
}

// Scalar op names only version 2 has: PyTensor 3.x's printed Maximum/Minimum, the complex
// parts (complex dtypes are version 2's), ScalarLoop (an inner graph). The special functions
// (gammainc, betainc, ...) are PyTensor 2.26 scalar ops too and are accepted in version 1.
const std::set<std::string, std::less<>>& version_2_scalar_ops() {
  static const std::set<std::string, std::less<>> ops = {"Maximum", "Minimum", "real",    "imag",
                                                         "conj",    "angle",   "complex", "ScalarLoop"};
  return ops;
}

// Props that version 2 added to the accepted-and-ignored list, and the inner graph. (`driver`
// and `overwrite_c` are ignored too, but PyTensor 2.26's linear-algebra ops carry them, so a
// version-1 file may.)
const std::set<std::string, std::less<>>& version_2_props() {
  static const std::set<std::string, std::less<>> props = {"destroyhandler_tolerate_aliased", "inner"};
  return props;
}

[[noreturn]] void needs_version_2(const std::string& what, const std::string& where) {
  throw UserError(what + " needs graph format version 2 (this file says \"version\": 1)", where);
}

// The dtypes version 2 added: float16, complex64 and complex128.
void check_dtype_name(const Json& v, const std::string& where) {
  if (v.is_string() && (v.get<std::string>() == "float16" || v.get<std::string>() == "complex64" ||
                        v.get<std::string>() == "complex128"))
    needs_version_2("the dtype \"" + v.get<std::string>() + "\"", where);
}

// A gufunc signature with an integer literal as a core dimension ("(m,3)").
bool has_literal_dimension(const std::string& signature) {
  bool start = true;  // at the start of a dimension name
  for (char c : signature) {
    if (start && std::isdigit(static_cast<unsigned char>(c))) return true;
    start = c == '(' || c == ',' || std::isspace(static_cast<unsigned char>(c));
  }
  return false;
}

void check_scalar_op(const Json& op, const std::string& where);

// A Composite's inner variables and nodes.
void check_composite(const Json& c, const std::string& where) {
  if (c.contains("variables") && c["variables"].is_array())
    for (std::size_t i = 0; i < c["variables"].size(); ++i) {
      const Json& v = c["variables"][i];
      if (v.is_object() && v.contains("dtype"))
        check_dtype_name(v["dtype"], where + "/variables/" + std::to_string(i) + "/dtype");
    }
  if (c.contains("nodes") && c["nodes"].is_array())
    for (std::size_t i = 0; i < c["nodes"].size(); ++i) {
      const Json& n = c["nodes"][i];
      if (n.is_object() && n.contains("op")) check_scalar_op(n["op"], where + "/nodes/" + std::to_string(i) + "/op");
    }
}

void check_scalar_op(const Json& op, const std::string& where) {
  if (op.is_string()) {
    if (version_2_scalar_ops().count(op.get<std::string>()))
      needs_version_2("the scalar op \"" + op.get<std::string>() + "\"", where);
    return;
  }
  if (!op.is_object() || !op.contains("name")) return;  // the loader refuses it in its words
  const Json& name = op["name"];
  if (name.is_string() && version_2_scalar_ops().count(name.get<std::string>()))
    needs_version_2("the scalar op \"" + name.get<std::string>() + "\"", where + "/name");
  if (op.contains("dtype")) check_dtype_name(op["dtype"], where + "/dtype");
  if (name == "Composite") check_composite(op, where);
}

// One op and its props (a node, or a Blockwise's core op).
void check_op(const Json& op, const Json& props, const std::string& where) {
  if (!op.is_string()) return;
  const std::string name = op.get<std::string>();
  if (version_2_ops().count(name) || is_random_variable(name)) needs_version_2("the op \"" + name + "\"", where + "/op");
  check_scalar_op(op, where + "/op");  // {"op": "Maximum"}: an Elemwise spelled by its scalar op
  if (!props.is_object()) return;
  const std::string at = where + "/props/";
  for (auto it = props.begin(); it != props.end(); ++it)
    if (version_2_props().count(it.key())) needs_version_2("the prop \"" + it.key() + "\"", at + it.key());
  if ((name == "Join" || name == "Split") && props.contains("axis"))
    needs_version_2(name + "'s \"axis\" prop (PyTensor 3.x's " + name + "{axis})", at + "axis");
  if ((name == "ExpandDims" || name == "Squeeze") && props.contains("axes"))
    needs_version_2(name + "'s \"axes\" prop", at + "axes");
  if ((name == "Softmax" || name == "LogSoftmax") && props.contains("axis") && props["axis"].is_array())
    needs_version_2("a list as " + name + "'s axis", at + "axis");
  if (props.contains("dtype")) check_dtype_name(props["dtype"], at + "dtype");
  if (props.contains("acc_dtype")) check_dtype_name(props["acc_dtype"], at + "acc_dtype");
  if (props.contains("scalar_op")) check_scalar_op(props["scalar_op"], at + "scalar_op");
  if (name == "Blockwise") {
    if (props.contains("signature") && props["signature"].is_string() &&
        has_literal_dimension(props["signature"].get<std::string>()))
      needs_version_2("an integer literal in a Blockwise signature", at + "signature");
    const Json& core = props.contains("core_op") ? props["core_op"] : Json();
    if (core.is_object() && core.contains("op"))
      check_op(core["op"], core.contains("props") ? core["props"] : Json(), at + "core_op");
  }
}

}  // namespace

void refuse_version_2_constructs(const Json& root) {
  if (root.contains("variables") && root["variables"].is_array())
    for (std::size_t i = 0; i < root["variables"].size(); ++i) {
      const Json& v = root["variables"][i];
      if (!v.is_object() || !v.contains("type") || !v["type"].is_object()) continue;
      const std::string at = "/variables/" + std::to_string(i) + "/type";
      const Json& t = v["type"];
      if (t.contains("kind")) needs_version_2("a type with a \"kind\" (rng, none)", at + "/kind");
      if (t.contains("dtype")) check_dtype_name(t["dtype"], at + "/dtype");
    }
  if (root.contains("nodes") && root["nodes"].is_array())
    for (std::size_t n = 0; n < root["nodes"].size(); ++n) {
      const Json& node = root["nodes"][n];
      if (node.is_object() && node.contains("op"))
        check_op(node["op"], node.contains("props") ? node["props"] : Json(), "/nodes/" + std::to_string(n));
    }
}

bool is_format_version_2_op(std::string_view op) { return version_2_ops().count(op) || is_random_variable(op); }

// --- identity wrappers ---------------------------------------------------------------------------

bool is_identity_wrapper(std::string_view op) {
  return op == "ViewOp" || op == "DeepCopyOp" || op == "OutputGuard" || op == "SpecifyAssumptions" ||
         op == "TensorFromScalar" || op == "ScalarFromTensor";
}

Var identity_wrapper_output(const std::string& op, const Json& props, const VarList& inputs,
                            const TensorType& declared, const std::string& pointer) {
  PropReader reader(props, pointer + "/props", op);
  // SpecifyAssumptions{assumptions} only informs PyTensor's rewrites: a list of (name, state).
  if (op == "SpecifyAssumptions" && reader.has("assumptions") && !reader.raw("assumptions").is_array())
    reader.fail("assumptions", "must be a list of [name, state] pairs");
  reader.raw("assumptions");
  if (op != "SpecifyAssumptions" && props.is_object() && props.contains("assumptions"))
    throw UserError("unknown prop \"assumptions\" for op " + op, pointer + "/props/assumptions");
  reader.finish();
  if (inputs.size() != 1)
    throw UserError(op + " takes 1 input, got " + std::to_string(inputs.size()), pointer + "/inputs");
  const TensorType& in = inputs[0]->type();
  // TensorFromScalar and ScalarFromTensor convert between a scalar and a 0-d tensor, which are
  // the same thing in kiln: their input must be 0-d.
  if ((op == "TensorFromScalar" || op == "ScalarFromTensor") && (!in.is_tensor() || in.ndim() != 0))
    throw UserError(op + " takes a 0-d value, got " + in.str(), pointer + "/inputs/0");
  if (!declared.compatible_with(in) || !in.at_least_as_specific_as(declared))
    throw UserError(op + " means its input, of type " + in.str() + ", but its output is declared " + declared.str(),
                    pointer + "/outputs/0");
  return inputs[0];
}

// --- normalisation ---------------------------------------------------------------------------------

namespace {

// A constant 0-d signed integer axis, normalised against `ndim`, when it is in range.
std::optional<int> constant_axis(const Var& axis, int ndim) {
  if (!axis->is_constant() || axis->ndim() != 0 || !is_signed_int(axis->dtype())) return std::nullopt;
  const std::optional<std::int64_t> v = constant_int(axis);
  if (!v || *v < -ndim || *v >= ndim) return std::nullopt;
  return static_cast<int>(*v < 0 ? *v + ndim : *v);
}

}  // namespace

void normalize_node(NodeSpelling& node) {
  if (!node.props.is_object()) return;
  auto& in = node.inputs;
  if (node.op == "Join" && !node.props.contains("axis") && in.size() >= 2 && in[1]->type().is_tensor()) {
    if (auto axis = constant_axis(in[0], in[1]->ndim())) {
      node.props["axis"] = *axis;
      in.erase(in.begin());
    }
  } else if (node.op == "Split" && !node.props.contains("axis") && in.size() == 3 && in[0]->type().is_tensor()) {
    if (auto axis = constant_axis(in[1], in[0]->ndim())) {
      node.props["axis"] = *axis;
      in.erase(in.begin() + 1);
    }
  } else if (node.op == "SpecifyShape") {
    // A NoneConst length is unchecked: version 1 writes it as the constant -1.
    for (std::size_t i = 1; i < in.size(); ++i)
      if (in[i]->type().kind == TypeKind::None) in[i] = int64_constant(-1);
  }
}

}  // namespace kiln
