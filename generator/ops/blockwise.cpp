#include "ops/blockwise.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>

#include "ir/error.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/linalg/linalg_common.h"
#include "ops/op_table.h"
#include "ops/shape.h"
#include "ops/grad_util.h"
#include "transform/vectorize.h"

namespace kiln {

// --- signatures ----------------------------------------------------------------------------

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? "," : "") + names[i];
  return "(" + s + ")";
}

// A small cursor parser for NumPy's grammar: list "->" list, list = arg ("," arg)*,
// arg = "(" [dim ("," dim)*] ")", dim = a name [A-Za-z_][A-Za-z0-9_]* or an integer literal
// [0-9]+ (a fixed length, as PyTensor 3.x writes "(m,3)").
class SignatureParser {
 public:
  explicit SignatureParser(const std::string& text) : text_(text) {
    for (char c : text)
      if (!std::isspace(static_cast<unsigned char>(c))) s_ += c;
  }

  GufuncSignature parse() {
    GufuncSignature sig;
    sig.inputs = arguments();
    if (s_.compare(pos_, 2, "->") != 0) fail("expected ',' or '->'");
    pos_ += 2;
    sig.outputs = arguments();
    if (pos_ != s_.size()) fail("unexpected text");
    return sig;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UserError("malformed gufunc signature \"" + text_ + "\": " + what + " after \"" +
                    s_.substr(0, pos_) + "\" (expected e.g. \"(m,k),(k,n)->(m,n)\")");
  }
  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  std::vector<std::vector<std::string>> arguments() {
    std::vector<std::vector<std::string>> args;
    do {
      args.push_back(argument());
    } while (at(',') && ++pos_);
    return args;
  }

  std::vector<std::string> argument() {
    if (!at('(')) fail("expected '('");
    ++pos_;
    std::vector<std::string> dims;
    if (at(')')) {
      ++pos_;
      return dims;
    }
    while (true) {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
      if (pos_ == start) fail("expected a dimension name");
      std::string dim = s_.substr(start, pos_ - start);
      if (std::isdigit(static_cast<unsigned char>(dim[0])) &&
          (dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 9))
        fail("a dimension is a name or an integer length, not \"" + dim + "\"");
      dims.push_back(dim);
      if (at(',')) {
        ++pos_;
      } else if (at(')')) {
        ++pos_;
        return dims;
      } else {
        fail("expected ',' or ')'");
      }
    }
  }

  const std::string& text_;
  std::string s_;
  std::size_t pos_ = 0;
};

}  // namespace

GufuncSignature GufuncSignature::parse(const std::string& text) {
  return SignatureParser(text).parse();
}

std::optional<std::int64_t> GufuncSignature::literal_length(const std::string& dim) {
  if (dim.empty() || !std::isdigit(static_cast<unsigned char>(dim[0]))) return std::nullopt;
  return std::stoll(dim);
}

std::string GufuncSignature::str() const {
  auto list = [](const std::vector<std::vector<std::string>>& args) {
    std::string s;
    for (std::size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + join_names(args[i]);
    return s;
  };
  return list(inputs) + "->" + list(outputs);
}

// --- the core ops kiln loops ---------------------------------------------------------------

namespace {

// Checks that a signature describes a dot product: x's last dimension and y's first one carry
// one name, and the output keeps x's other dimension and y's other one, in order.
// `min_rank`: 1 for Dot (vectors or matrices), 2 for Dot22 (matrices only).
std::string check_dot_signature(const std::string& op, const GufuncSignature& sig,
                                std::size_t min_rank) {
  if (sig.inputs.size() != 2 || sig.outputs.size() != 1)
    return op + " takes 2 inputs and gives 1 output, the signature has " +
           std::to_string(sig.inputs.size()) + " input(s) and " +
           std::to_string(sig.outputs.size()) + " output(s)";
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t r = sig.inputs[i].size();
    if (r < min_rank || r > 2)
      return "input " + std::to_string(i) + " of " + op + " must have " +
             (min_rank == 2 ? std::string("2 core dimensions")
                            : std::string("1 or 2 core dimensions")) +
             ", the signature gives it " + std::to_string(r);
  }
  const auto& x = sig.inputs[0];
  const auto& y = sig.inputs[1];
  if (x.back() != y.front())
    return "the contracted dimension must have one name, got '" + x.back() +
           "' (last of input 0) and '" + y.front() + "' (first of input 1)";
  std::vector<std::string> expected(x.begin(), x.end() - 1);
  if (y.size() == 2) expected.push_back(y[1]);
  if (sig.outputs[0] != expected)
    return "the output of " + op + " must be " + join_names(expected) + ", the signature says " +
           join_names(sig.outputs[0]);
  return "";
}

// "" when `sig` fits `core`, else why not; nullopt when kiln cannot loop `core` at all.
std::optional<std::string> check_core(const Op& core, const GufuncSignature& sig) {
  if (core.name() == "Dot") return check_dot_signature("Dot", sig, 1);
  if (core.name() == "Dot22") return check_dot_signature("Dot22", sig, 2);
  if (const auto* linalg = dynamic_cast<const LinalgOp*>(&core)) {
    std::vector<int> ranks;
    for (const auto& in : sig.inputs) ranks.push_back(static_cast<int>(in.size()));
    const std::string own = linalg->gufunc_signature(ranks);
    if (same_signature_shape(own, sig.str())) return std::string();
    return "the signature of " + std::string(core.name()) + " is " + own;
  }
  return std::nullopt;
}

std::string supported_list() {
  std::string s;
  for (const auto& name : blockwise_core_ops()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

NotImplementedError unsupported_core(const std::string& core) {
  return NotImplementedError("Blockwise with core op " + core +
                             " is not implemented yet in kiln (kiln loops " + supported_list() +
                             ")");
}

// The core part (trailing `core` dimensions) of a type.
TensorType core_type(const TensorType& t, std::size_t core) {
  return TensorType(t.dtype,
                    Shape(t.shape.end() - static_cast<std::ptrdiff_t>(core), t.shape.end()));
}

}  // namespace

const std::vector<std::string>& blockwise_core_ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"Dot", "Dot22"};
    for (const auto& name : linalg_op_names()) v.push_back(name);
    return v;
  }();
  return names;
}

// --- Blockwise -----------------------------------------------------------------------------

Blockwise::Blockwise(OpPtr core_op, const std::string& signature) : core_op_(std::move(core_op)) {
  if (!core_op_) throw UserError("Blockwise: the core op is null");
  signature_ = GufuncSignature::parse(signature);
  const std::optional<std::string> why = check_core(*core_op_, signature_);
  if (!why) throw unsupported_core(core_op_->str());
  if (!why->empty())
    throw UserError("signature " + signature_.str() + " does not fit core op " + core_op_->str() +
                    ": " + *why);
}

int Blockwise::batch_ndim(const Apply& node) const {
  return node.input(0)->ndim() - static_cast<int>(signature_.inputs[0].size());
}

Json Blockwise::props() const {
  return Json{
      {"core_op", Json{{"op", std::string(core_op_->name())}, {"props", core_op_->props()}}},
      {"signature", signature_.str()}};
}

std::string Blockwise::str() const {
  return "Blockwise{" + core_op_->str() + ", " + signature_.str() + "}";
}

std::vector<TensorType> Blockwise::infer_types(const VarList& inputs) const {
  const auto& sig_in = signature_.inputs;
  if (inputs.size() != sig_in.size())
    type_error(*this, "takes " + std::to_string(sig_in.size()) + " inputs, got " +
                          std::to_string(inputs.size()));
  int batch = -1;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int core = static_cast<int>(sig_in[i].size());
    const int nb = inputs[i]->ndim() - core;
    if (nb < 0)
      type_error(*this, "input " + std::to_string(i) + " has rank " +
                            std::to_string(inputs[i]->ndim()) + " but the signature gives it " +
                            std::to_string(core) + " core dimensions " + join_names(sig_in[i]));
    if (batch >= 0 && nb != batch)
      type_error(*this, "input " + std::to_string(i) + " has " + std::to_string(nb) +
                            " batch dimensions but input 0 has " + std::to_string(batch) +
                            " (left-pad it with ExpandDims to broadcast)");
    batch = nb;
  }
  // Batch dimensions broadcast like Elemwise.
  std::vector<TensorType> batch_types;
  for (const auto& in : inputs)
    batch_types.emplace_back(in->dtype(), Shape(in->shape().begin(), in->shape().begin() + batch));
  Shape batch_shape;
  try {
    batch_shape = broadcast_static_shapes(batch_types);
  } catch (const std::invalid_argument& e) {
    type_error(*this, std::string("incompatible batch shapes: ") + e.what());
  }
  // One length per core dimension name.
  std::map<std::string, std::int64_t> lengths;
  VarList core_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    TensorType core = core_type(inputs[i]->type(), sig_in[i].size());
    for (std::size_t j = 0; j < sig_in[i].size(); ++j) {
      // An integer literal fixes the length (a static one must agree; it becomes static).
      const auto literal = GufuncSignature::literal_length(sig_in[i][j]);
      if (literal && core.shape[j] == kUnknownLength) core.shape[j] = *literal;
      std::int64_t& len = lengths.emplace(sig_in[i][j], literal.value_or(kUnknownLength)).first->second;
      if (len != kUnknownLength && core.shape[j] != kUnknownLength && len != core.shape[j])
        type_error(*this, "core dimension '" + sig_in[i][j] + "' has static length " +
                              std::to_string(len) + " in one input and " +
                              std::to_string(core.shape[j]) + " in input " + std::to_string(i));
      if (len == kUnknownLength) len = core.shape[j];
    }
    core_inputs.push_back(make_input(core));
  }
  std::vector<TensorType> core_out;
  try {
    core_out = core_op_->infer_types(core_inputs);
  } catch (const UserError& e) {
    type_error(*this, e.message());
  }
  KILN_INTERNAL_ASSERT(core_out.size() == signature_.outputs.size(),
                       "Blockwise core op output count");
  std::vector<TensorType> out;
  for (std::size_t k = 0; k < core_out.size(); ++k) {
    const auto& names = signature_.outputs[k];
    KILN_INTERNAL_ASSERT(core_out[k].shape.size() == names.size(), "Blockwise core op output rank");
    Shape shape = batch_shape;
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (auto literal = GufuncSignature::literal_length(names[j])) lengths.emplace(names[j], *literal);
      auto it = lengths.find(names[j]);
      shape.push_back(it == lengths.end() || it->second == kUnknownLength ? core_out[k].shape[j]
                                                                          : it->second);
    }
    out.emplace_back(core_out[k].dtype, shape);
  }
  return out;
}

namespace {

// Binds every core dimension name to its run-time length; RuntimeFailure on a conflict.
std::map<std::string, std::int64_t> bind_core_lengths(const GufuncSignature& sig,
                                                      const std::vector<Array>& inputs, int nb) {
  std::map<std::string, std::int64_t> lengths;
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t j = 0; j < sig.inputs[i].size(); ++j) {
      const std::string& name = sig.inputs[i][j];
      const std::int64_t len = inputs[i].shape(nb + static_cast<int>(j));
      if (auto literal = GufuncSignature::literal_length(name); literal && *literal != len)
        throw RuntimeFailure("core dimension '" + name + "' has length " + std::to_string(len) + " in input " +
                             std::to_string(i) + " but the signature fixes it (signature " + sig.str() + ")");
      auto [it, fresh] = lengths.emplace(name, len);
      if (fresh) {
        owner[name] = i;
      } else if (it->second != len) {
        throw RuntimeFailure("core dimension '" + name + "' has length " +
                             std::to_string(it->second) + " in input " +
                             std::to_string(owner[name]) + " but " + std::to_string(len) +
                             " in input " + std::to_string(i) + " (signature " + sig.str() + ")");
      }
    }
  }
  return lengths;
}

// The view of one batch element: leading batch dims indexed (length-1 ones broadcast).
Array batch_element(const Array& a, int nb, const std::vector<std::int64_t>& index) {
  std::int64_t offset = 0;
  for (int d = 0; d < nb; ++d)
    if (a.shape(d) != 1)
      offset += index[static_cast<std::size_t>(d)] * a.strides()[static_cast<std::size_t>(d)];
  return a.view(Shape(a.shape().begin() + nb, a.shape().end()),
                Shape(a.strides().begin() + nb, a.strides().end()), offset);
}

}  // namespace

void Blockwise::perform(const Apply& node, const std::vector<Array>& inputs,
                        std::vector<Array>& outputs) const {
  const int nb = batch_ndim(node);
  std::vector<TensorType> batch_types;
  VarList core_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = node.input(static_cast<int>(i))->type();
    batch_types.emplace_back(t.dtype, Shape(t.shape.begin(), t.shape.begin() + nb));
    core_inputs.push_back(make_input(core_type(t, signature_.inputs[i].size())));
  }
  const Shape batch_shape = elemwise_runtime_shape(batch_types, inputs);
  bind_core_lengths(signature_, inputs, nb);
  // The core outputs' shapes: the core op's type inference on inputs of the run-time core
  // shapes (so an empty batch still has them); a length it cannot tell is taken from the first
  // core result.
  VarList bound_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    bound_inputs.push_back(make_input(TensorType(core_inputs[i]->dtype(),
                                                 Shape(inputs[i].shape().begin() + nb, inputs[i].shape().end()))));
  const ApplyPtr core_node = make_node(core_op_, core_inputs);
  std::vector<TensorType> bound_types;
  try {
    bound_types = core_op_->infer_types(bound_inputs);
  } catch (const UserError& e) {
    throw RuntimeFailure(e.message());
  }
  const std::size_t n_out = signature_.outputs.size();
  std::vector<Shape> core_shapes(n_out);
  for (std::size_t k = 0; k < n_out; ++k) core_shapes[k] = bound_types[k].shape;
  std::vector<Array> outs(n_out);
  auto allocate = [&](std::size_t k) {
    Shape shape = batch_shape;
    shape.insert(shape.end(), core_shapes[k].begin(), core_shapes[k].end());
    outs[k] = Array::empty(node.output_ptr(static_cast<int>(k))->dtype(), shape);
  };
  const std::int64_t total = shape_size(batch_shape);
  for (std::size_t k = 0; k < n_out; ++k) {
    const bool known = std::find(core_shapes[k].begin(), core_shapes[k].end(), kUnknownLength) ==
                       core_shapes[k].end();
    if (known)
      allocate(k);
    else if (total == 0)
      throw RuntimeFailure("cannot tell the core shape of output " + std::to_string(k) +
                           " of an empty batch");
  }

  std::vector<std::int64_t> index(static_cast<std::size_t>(nb), 0);
  for (std::int64_t step = 0; step < total; ++step) {
    std::vector<Array> args;
    for (const auto& in : inputs) args.push_back(batch_element(in, nb, index));
    std::vector<Array> results(n_out);
    core_op_->perform(*core_node, args, results);
    for (std::size_t k = 0; k < n_out; ++k) {
      if (!outs[k].defined()) {
        core_shapes[k] = results[k].shape();
        allocate(k);
      }
      if (results[k].shape() != core_shapes[k])
        throw RuntimeFailure("core op " + core_op_->str() + " gave output " + std::to_string(k) +
                             " of shape " + shape_str(results[k].shape()) + ", expected " +
                             shape_str(core_shapes[k]));
      Array dst = batch_element(outs[k], nb, index);
      results[k].copy_into(dst);
    }
    for (int d = nb - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < batch_shape[static_cast<std::size_t>(d)]) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  outputs = outs;
}

std::vector<ShapeVars> Blockwise::infer_shape(const Apply& node,
                                              const std::vector<ShapeVars>& input_shapes) const {
  const int nb = batch_ndim(node);
  ShapeVars batch;
  for (int d = 0; d < nb; ++d) {
    Var dim;
    for (int i = 0; i < node.num_inputs() && !dim; ++i)
      if (!node.input(i)->type().broadcastable(d))
        dim = input_shapes[static_cast<std::size_t>(i)][static_cast<std::size_t>(d)];
    batch.push_back(dim ? dim : int64_constant(1));
  }
  std::map<std::string, Var> named;
  for (std::size_t i = 0; i < signature_.inputs.size(); ++i)
    for (std::size_t j = 0; j < signature_.inputs[i].size(); ++j)
      named.emplace(signature_.inputs[i][j], input_shapes[i][static_cast<std::size_t>(nb) + j]);
  // Lengths only the outputs name (SVD's k, BlockDiagonal's sums): a linear-algebra core op's
  // own formulas on the core shapes; otherwise the node's outputs have to be computed.
  std::vector<ShapeVars> core_out;
  if (dynamic_cast<const LinalgOp*>(core_op_.get())) {
    VarList core_inputs;
    std::vector<ShapeVars> core_shapes;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const TensorType& t = node.input(i)->type();
      core_inputs.push_back(make_input(TensorType(t.dtype, Shape(t.shape.begin() + nb, t.shape.end()))));
      const ShapeVars& s = input_shapes[static_cast<std::size_t>(i)];
      core_shapes.emplace_back(s.begin() + nb, s.end());
    }
    core_out = output_shapes(*make_node(core_op_, core_inputs), core_shapes);
  }
  std::vector<ShapeVars> out;
  for (std::size_t k = 0; k < signature_.outputs.size(); ++k) {
    ShapeVars dims = batch;
    for (std::size_t j = 0; j < signature_.outputs[k].size(); ++j) {
      auto it = named.find(signature_.outputs[k][j]);
      if (it != named.end())
        dims.push_back(it->second);
      else if (!core_out.empty())
        dims.push_back(core_out[k][j]);
      else
        dims.push_back(shape_i(node.output(static_cast<int>(k)), nb + static_cast<int>(j)));
    }
    out.push_back(dims);
  }
  return out;
}

// --- builders ------------------------------------------------------------------------------

VarList blockwise(OpPtr core_op, const std::string& signature, VarList inputs) {
  auto op = std::make_shared<Blockwise>(std::move(core_op), signature);
  const auto& sig = op->signature().inputs;
  if (inputs.size() != sig.size())
    throw UserError(op->str() + ": takes " + std::to_string(sig.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  int nb = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw UserError(op->str() + ": input " + std::to_string(i) + " is null");
    const int b = inputs[i]->ndim() - static_cast<int>(sig[i].size());
    if (b < 0)
      throw UserError(op->str() + ": input " + std::to_string(i) + " has rank " +
                      std::to_string(inputs[i]->ndim()) + " but the signature gives it " +
                      std::to_string(sig[i].size()) + " core dimensions");
    nb = std::max(nb, b);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs[i] =
        expand_dims_left(inputs[i], nb - (inputs[i]->ndim() - static_cast<int>(sig[i].size())));
  return make_node(op, std::move(inputs))->outputs();
}

Var blockwise1(OpPtr core_op, const std::string& signature, VarList inputs) {
  VarList outs = blockwise(std::move(core_op), signature, std::move(inputs));
  if (outs.size() != 1)
    throw UserError("blockwise1: the signature " + signature + " has several outputs");
  return outs[0];
}

// --- graph-file factory --------------------------------------------------------------------

namespace {

// A Blockwise node's props read and checked: its core op's entry and props, its signature.
struct BlockwiseProps {
  std::string core_name;
  const OpEntry* entry = nullptr;
  const Json* core_props = nullptr;
  std::string core_where;
  std::string sig_text;
  GufuncSignature sig;
  InnerGraphLoader inner_loader;  ///< the core op's inner graph (a Scan's step)
};

BlockwiseProps read_blockwise_props(PropReader& props) {
  BlockwiseProps r;
  const Json& core = props.raw("core_op");
  r.sig_text = props.get_string("signature");
  props.finish();
  r.core_where = props.where("core_op");
  r.inner_loader = props.inner_graph_loader();
  if (!core.is_object() || !core.contains("op") || !core["op"].is_string())
    throw UserError(
        "Blockwise: prop \"core_op\" must be an op object {\"op\": name, \"props\": {...}}, not " +
            core.dump(),
        r.core_where);
  for (auto it = core.begin(); it != core.end(); ++it)
    if (it.key() != "op" && it.key() != "props")
      throw UserError("Blockwise: unknown key \"" + it.key() + "\" in core_op",
                      r.core_where + "/" + it.key());
  r.core_name = core["op"].get<std::string>();
  r.entry = find_op(r.core_name);
  if (!r.entry)
    throw UserError("Blockwise: unknown core op \"" + r.core_name + "\"", r.core_where + "/op");
  static const Json kNoProps = Json::object();
  r.core_props = core.contains("props") ? &core["props"] : &kNoProps;
  try {
    r.sig = GufuncSignature::parse(r.sig_text);
  } catch (const UserError& e) {
    throw UserError("Blockwise: " + e.message(), props.where("signature"));
  }
  return r;
}

// The core op, made by its factory from the core part of each input's type (where the ranks
// allow it).
OpPtr make_core_op(const BlockwiseProps& b, const std::vector<TensorType>& input_types) {
  std::vector<TensorType> core_types;
  for (std::size_t i = 0; i < input_types.size() && i < b.sig.inputs.size(); ++i)
    if (input_types[i].shape.size() >= b.sig.inputs[i].size())
      core_types.push_back(core_type(input_types[i], b.sig.inputs[i].size()));
  PropReader core_props(*b.core_props, b.core_where + "/props", b.core_name);
  if (b.inner_loader) core_props.set_inner_graph_loader(b.inner_loader);
  return b.entry->make(core_props, core_types);
}

// `x` without its `n` leading batch dimensions, each statically of length 1: the variable an
// ExpandDims made it from where there is one (PyTensor pads a Join's constant axis so; it must
// stay a constant for Join's rule), else a squeeze.
Var drop_unit_batch(const Var& x, int n) {
  const Apply* owner = x->owner();
  if (owner && owner->num_inputs() == 1 && owner->input(0)->ndim() == x->ndim() - n) {
    const auto* ds = dynamic_cast<const DimShuffle*>(&owner->op());
    bool leading = ds && ds->is_expand_dims();
    for (int d = 0; leading && d < n; ++d) leading = ds->new_order()[static_cast<std::size_t>(d)] == DimShuffle::kNewAxis;
    if (leading) return owner->input(0);
  }
  if (x->is_constant()) {  // PyTensor's rewrites fold the padded axis into a constant of shape (1,)
    const Array& v = x->value();
    return make_constant(v.view(Shape(v.shape().begin() + n, v.shape().end()),
                                Shape(v.strides().begin() + n, v.strides().end()))
                             .copy());
  }
  std::vector<int> axes;
  for (int d = 0; d < n; ++d) axes.push_back(d);
  return squeeze(x, axes);
}

bool is_looped_core(const std::string& name) {
  const auto& loopable = blockwise_core_ops();
  return std::find(loopable.begin(), loopable.end(), name) != loopable.end();
}

}  // namespace

bool blockwise_core_is_looped(const Json& props) {
  if (!props.is_object() || !props.contains("core_op")) return true;  // blockwise_from_props refuses it
  const Json& core = props["core_op"];
  return !core.is_object() || !core.contains("op") || !core["op"].is_string() ||
         is_looped_core(core["op"].get<std::string>()) || !find_op(core["op"].get<std::string>());
}

VarList blockwise_by_vectorize(PropReader& props, const VarList& inputs) {
  const BlockwiseProps b = read_blockwise_props(props);
  if (inputs.size() != b.sig.inputs.size())
    throw UserError("Blockwise: signature " + b.sig.str() + " has " + std::to_string(b.sig.inputs.size()) +
                        " input(s), the node " + std::to_string(inputs.size()),
                    props.where("signature"));
  std::vector<TensorType> types;
  for (const Var& in : inputs) types.push_back(in->type());
  OpPtr core_op = make_core_op(b, types);
  // Batch dimensions all statically 1 broadcast like none, so such an input is used without
  // them (a constant Join axis then stays a constant, as the batching rules need) wherever
  // another input keeps the whole batch rank. The core node reads an unbatched input itself
  // and a core-shaped stand-in for a batched one.
  std::vector<int> batch;
  int nb = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int core = static_cast<int>(b.sig.inputs[i].size());
    if (inputs[i]->ndim() < core)
      throw UserError("Blockwise: input " + std::to_string(i) + " has rank " + std::to_string(inputs[i]->ndim()) +
                          ", fewer than its " + std::to_string(core) + " core dimension(s) in " + b.sig.str(),
                      props.where("signature"));
    batch.push_back(inputs[i]->ndim() - core);
    nb = std::max(nb, batch.back());
  }
  auto unit_batch = [&](std::size_t i) {
    for (int d = 0; d < batch[i]; ++d)
      if (inputs[i]->type().shape[static_cast<std::size_t>(d)] != 1) return false;
    return batch[i] > 0;
  };
  bool full_rank_kept = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) full_rank_kept |= batch[i] == nb && !unit_batch(i);
  VarList batched = inputs, core_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (full_rank_kept && unit_batch(i)) batched[i] = drop_unit_batch(inputs[i], batch[i]);
    const std::size_t core = b.sig.inputs[i].size();
    core_inputs.push_back(batched[i]->type().shape.size() == core ? batched[i]
                                                                  : make_input(core_type(batched[i]->type(), core)));
  }
  ApplyPtr core_node = make_node(core_op, core_inputs);
  try {
    return vectorize_node(*core_node, batched);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(unsupported_core(b.core_name).message() + ", and its batching rule fails: " +
                                  e.message(),
                              b.core_where);
  }
}

OpPtr blockwise_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const BlockwiseProps b = read_blockwise_props(props);
  if (!is_looped_core(b.core_name)) {
    NotImplementedError e = unsupported_core(b.core_name);
    throw NotImplementedError(e.message(), b.core_where);
  }
  OpPtr core_op = make_core_op(b, input_types);
  try {
    return std::make_shared<Blockwise>(core_op, b.sig_text);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(e.message(), b.core_where);
  } catch (const UserError& e) {
    throw UserError("Blockwise: " + e.message(), props.where("signature"));
  }
}

// --- gradients: the core op's pullback, built for core shapes and then vectorized -------------

std::vector<GradTerm> Blockwise::pullback(const Apply& node, const VarList& output_grads) const {
  const int nb = batch_ndim(node);
  auto core_type = [&](const TensorType& t) {
    return TensorType(t.dtype, Shape(t.shape.begin() + nb, t.shape.end()));
  };
  VarList core_inputs;
  Replacements batched;
  for (const Var& in : node.inputs()) {
    core_inputs.push_back(make_input(core_type(in->type())));
    batched.emplace_back(core_inputs.back(), in);
  }
  ApplyPtr core = make_node(core_op_, core_inputs);
  VarList core_grads;
  for (std::size_t j = 0; j < output_grads.size(); ++j) {
    const Var& g = output_grads[j];
    if (!g) {
      core_grads.push_back(nullptr);
      continue;
    }
    core_grads.push_back(make_input(core_type(g->type())));
    batched.emplace_back(core_grads.back(), g);
  }
  std::vector<GradTerm> terms = core_op_->pullback(*core, core_grads);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].kind != GradTerm::Kind::Value) continue;
    const Var& in = node.input(static_cast<int>(i));
    Var g = vectorize_graph(terms[i].value, batched);
    if (g->ndim() < in->ndim()) g = broadcast_like(expand_dims_left(g, in->ndim() - g->ndim()), in);
    terms[i] = GradTerm::of(sum_to_type(g, in->type()));
  }
  return terms;
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Blockwise::vectorize(const Apply&, const VarList& batched_inputs) const {
  return blockwise(core_op_, signature_.str(), batched_inputs);  // more batch dimensions
}

}  // namespace kiln
