#include "ops/scan.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/graph_key.h"
#include "ops/constant.h"
#include "ops/math.h"
#include "ops/shape.h"

namespace kiln {

// --- ScanInfo ---------------------------------------------------------------------------------

const ScanInfo::Taps& ScanInfo::taps(int k) const {
  if (k < n_mit_mot()) return mit_mot_in_slices[static_cast<std::size_t>(k)];
  if (k < n_mit_mot() + n_mit_sot()) return mit_sot_in_slices[static_cast<std::size_t>(k - n_mit_mot())];
  return sit_sot_in_slices.at(static_cast<std::size_t>(k - n_mit_mot() - n_mit_sot()));
}

std::int64_t ScanInfo::min_tap(int k) const {
  if (k >= n_tap_outs()) return 0;
  const Taps& t = taps(k);
  return t.empty() ? 0 : *std::min_element(t.begin(), t.end());
}

int ScanInfo::n_mit_mot_outs() const {
  int n = 0;
  for (const auto& s : mit_mot_out_slices) n += static_cast<int>(s.size());
  return n;
}

int ScanInfo::inner_tap_input(int k, int j) const {
  int at = inner_taps_begin();
  for (int b = 0; b < k; ++b) at += static_cast<int>(taps(b).size());
  return at + j;
}

int ScanInfo::inner_untraced_begin() const { return inner_tap_input(n_tap_outs(), 0); }

Json ScanInfo::to_json() const {
  return Json{{"n_seqs", n_seqs},
              {"mit_mot_in_slices", mit_mot_in_slices},
              {"mit_mot_out_slices", mit_mot_out_slices},
              {"mit_sot_in_slices", mit_sot_in_slices},
              {"sit_sot_in_slices", sit_sot_in_slices},
              {"n_nit_sot", n_nit_sot},
              {"n_untraced_sit_sot", n_untraced_sit_sot},
              {"n_non_seqs", n_non_seqs},
              {"as_while", as_while}};
}

// --- the op -----------------------------------------------------------------------------------

namespace {

// "rank r dtype" of a type, for messages.
std::string type_words(const TensorType& t) { return t.str(); }

// A tensor of one more (leading) dimension than `element`, the same dtype.
bool holds_elements(const TensorType& outer, const TensorType& element) {
  return outer.is_tensor() && element.is_tensor() && outer.dtype == element.dtype && outer.ndim() == element.ndim() + 1;
}

// The element type of a buffer or sequence (its leading dimension dropped).
TensorType element_of(const TensorType& outer) {
  return TensorType(outer.dtype, Shape(outer.shape.begin() + 1, outer.shape.end()));
}

}  // namespace

std::string scan_layout_error(const ScanInfo& info, const FunctionGraph& inner) {
  const VarList& ins = inner.inputs();
  const VarList& outs = inner.outputs();
  if (static_cast<int>(ins.size()) != info.n_inner_inputs())
    return "the inner graph has " + std::to_string(ins.size()) + " input(s) but the info needs " +
           std::to_string(info.n_inner_inputs()) +
           " (sequences, every tap of mit-mot/mit-sot/sit-sot, untraced sit-sot, non-sequences)";
  if (static_cast<int>(outs.size()) != info.n_inner_outputs())
    return "the inner graph has " + std::to_string(outs.size()) + " output(s) but the info needs " +
           std::to_string(info.n_inner_outputs()) +
           " (mit-mot taps written, mit-sot, sit-sot, nit-sot, untraced sit-sot" +
           (info.as_while ? ", the condition)" : ")");
  for (int i = 0; i < info.n_seqs; ++i)
    if (!ins[static_cast<std::size_t>(i)]->type().is_tensor())
      return "inner input " + std::to_string(i) + " (sequence " + std::to_string(i) + ") is not a tensor";
  // Every tap of one buffer reads elements of one type; what the step writes has that dtype and rank.
  for (int k = 0; k < info.n_tap_outs(); ++k) {
    const TensorType& first = ins[static_cast<std::size_t>(info.inner_tap_input(k, 0))]->type();
    if (!first.is_tensor()) return "inner input " + std::to_string(info.inner_tap_input(k, 0)) + " (a tap) is not a tensor";
    for (std::size_t j = 1; j < info.taps(k).size(); ++j) {
      const TensorType& t = ins[static_cast<std::size_t>(info.inner_tap_input(k, static_cast<int>(j)))]->type();
      if (t.dtype != first.dtype || t.ndim() != first.ndim())
        return "inner inputs " + std::to_string(info.inner_tap_input(k, 0)) + " and " +
               std::to_string(info.inner_tap_input(k, static_cast<int>(j))) + " are taps of one buffer but have types " +
               type_words(first) + " and " + type_words(t);
    }
    std::vector<int> written;
    if (k < info.n_mit_mot()) {
      int at = 0;
      for (int b = 0; b < k; ++b) at += static_cast<int>(info.mit_mot_out_slices[static_cast<std::size_t>(b)].size());
      for (std::size_t j = 0; j < info.mit_mot_out_slices[static_cast<std::size_t>(k)].size(); ++j)
        written.push_back(at + static_cast<int>(j));
    } else {
      written.push_back(info.inner_output_of(k));
    }
    for (int o : written) {
      const TensorType& t = outs[static_cast<std::size_t>(o)]->type();
      if (!t.is_tensor() || t.dtype != first.dtype || t.ndim() != first.ndim())
        return "inner output " + std::to_string(o) + " is " + type_words(t) + " but the taps it feeds (inner input " +
               std::to_string(info.inner_tap_input(k, 0)) + ") are " + type_words(first);
    }
  }
  for (int j = 0; j < info.n_nit_sot; ++j) {
    const int o = info.inner_output_of(info.nit_sot_outs_begin() + j);
    if (!outs[static_cast<std::size_t>(o)]->type().is_tensor())
      return "inner output " + std::to_string(o) + " (nit-sot " + std::to_string(j) + ") is not a tensor";
  }
  for (int j = 0; j < info.n_untraced_sit_sot; ++j) {
    const TensorType& in = ins[static_cast<std::size_t>(info.inner_untraced_begin() + j)]->type();
    const TensorType& out = outs[static_cast<std::size_t>(info.inner_untraced_outs_begin() + j)]->type();
    if (!in.compatible_with(out))
      return "untraced sit-sot " + std::to_string(j) + ": the inner input " +
             std::to_string(info.inner_untraced_begin() + j) + " is " + type_words(in) + " but the inner output " +
             std::to_string(info.inner_untraced_outs_begin() + j) + " is " + type_words(out);
  }
  if (info.as_while) {
    const TensorType& c = outs.back()->type();
    // Any 0-d number: the loop stops when it is nonzero (Scan.perform tests its truth, so
    // PyTensor's until() of a float works too).
    if (!c.is_tensor() || c.ndim() != 0)
      return "the last inner output (the while condition) must be a 0-d number, got " + type_words(c);
  }
  return {};
}

Scan::Scan(ScanInfo info, std::shared_ptr<const FunctionGraph> inner, std::int64_t truncate_gradient, std::string label)
    : info_(std::move(info)), inner_(std::move(inner)), truncate_gradient_(truncate_gradient), label_(std::move(label)) {
  KILN_INTERNAL_ASSERT(inner_ != nullptr, "Scan without an inner graph");
  const std::string why = scan_layout_error(info_, *inner_);
  if (!why.empty()) throw UserError("Scan: " + why);
}

const Scan* scan_op(const Apply* node) { return node ? dynamic_cast<const Scan*>(&node->op()) : nullptr; }

Json Scan::props() const {
  return Json{{"info", info_.to_json()},
              {"truncate_gradient", truncate_gradient_},
              {"name", label_}};
}

std::string Scan::structure_key() const { return structural_key(*inner_); }

std::string Scan::str() const {
  return "Scan{" + label_ + ", while_loop=" + (info_.as_while ? "True" : "False") + ", inplace=none}";
}

bool Scan::accepts_kind(int index, TypeKind kind) const {
  const bool untraced = index >= info_.untraced_begin() && index < info_.nit_sot_lengths_begin();
  return untraced || index >= info_.non_seqs_begin() || kind == TypeKind::Tensor;
}

std::vector<TensorType> Scan::infer_types(const VarList& inputs) const {
  const ScanInfo& in = info_;
  if (static_cast<int>(inputs.size()) != in.n_outer_inputs())
    type_error(*this, "takes " + std::to_string(in.n_outer_inputs()) +
                          " inputs (n_steps, sequences, mit-mot, mit-sot, sit-sot, untraced sit-sot, nit-sot lengths, "
                          "non-sequences), got " + std::to_string(inputs.size()));
  auto input = [&](int i) -> const TensorType& { return inputs[static_cast<std::size_t>(i)]->type(); };
  auto inner_in = [&](int i) -> const TensorType& { return inner_->inputs()[static_cast<std::size_t>(i)]->type(); };
  auto integer_scalar = [&](int i, const std::string& what) {
    if (input(i).ndim() != 0 || !is_integer(input(i).dtype))
      type_error(*this, what + " (input " + std::to_string(i) + ") must be a 0-d integer, got " + type_words(input(i)));
  };
  integer_scalar(0, "n_steps");
  for (int s = 0; s < in.n_seqs; ++s) {
    const int i = in.seqs_begin() + s;
    if (!holds_elements(input(i), inner_in(s)) || !element_of(input(i)).compatible_with(inner_in(s)))
      type_error(*this, "sequence " + std::to_string(s) + " (input " + std::to_string(i) + ") is " +
                            type_words(input(i)) + " but the inner graph takes its elements as " + type_words(inner_in(s)));
  }
  std::vector<TensorType> out;
  for (int k = 0; k < in.n_tap_outs(); ++k) {
    const int i = in.tap_buffers_begin() + k;
    const TensorType& tap = inner_in(in.inner_tap_input(k, 0));
    if (!holds_elements(input(i), tap) || !element_of(input(i)).compatible_with(tap))
      type_error(*this, "the buffer of tap output " + std::to_string(k) + " (input " + std::to_string(i) + ") is " +
                            type_words(input(i)) + " but the inner graph reads its taps as " + type_words(tap));
    TensorType t = input(i);
    if (in.as_while) t.shape[0] = kUnknownLength;  // a loop that stops early shortens the buffer
    out.push_back(t);
  }
  for (int j = 0; j < in.n_nit_sot; ++j) {
    integer_scalar(in.nit_sot_lengths_begin() + j, "the length of nit-sot " + std::to_string(j));
    const TensorType& e = inner_->outputs()[static_cast<std::size_t>(in.inner_output_of(in.nit_sot_outs_begin() + j))]->type();
    Shape shape{kUnknownLength};
    shape.insert(shape.end(), e.shape.begin(), e.shape.end());
    out.emplace_back(e.dtype, shape);
  }
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const int i = in.untraced_begin() + j;
    if (!input(i).compatible_with(inner_in(in.inner_untraced_begin() + j)))
      type_error(*this, "untraced sit-sot " + std::to_string(j) + " (input " + std::to_string(i) + ") is " +
                            type_words(input(i)) + " but the inner graph takes " +
                            type_words(inner_in(in.inner_untraced_begin() + j)));
  }
  for (int j = 0; j < in.n_non_seqs; ++j) {
    const int i = in.non_seqs_begin() + j;
    if (!input(i).compatible_with(inner_in(in.inner_non_seqs_begin() + j)))
      type_error(*this, "non-sequence " + std::to_string(j) + " (input " + std::to_string(i) + ") is " +
                            type_words(input(i)) + " but the inner graph takes " +
                            type_words(inner_in(in.inner_non_seqs_begin() + j)));
  }
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) out.push_back(input(in.untraced_begin() + j));
  return out;
}

namespace {

// The step function as an InnerGraph (ir/inner_graph.h), for dprint and --stats.
class ScanStep : public InnerGraph {
 public:
  explicit ScanStep(std::shared_ptr<const FunctionGraph> inner) : inner_(std::move(inner)) {}
  int num_inputs() const override { return static_cast<int>(inner_->inputs().size()); }
  int num_outputs() const override { return static_cast<int>(inner_->outputs().size()); }
  std::size_t num_nodes() const override { return inner_->toposort().size(); }
  VarList apply(const VarList&) const override {
    throw NotImplementedError("a Scan's step function cannot be inlined: it runs once per step");
  }

 private:
  std::shared_ptr<const FunctionGraph> inner_;
};

}  // namespace

std::vector<InnerGraphUse> Scan::inner_graphs() const {
  return {InnerGraphUse{std::make_shared<ScanStep>(inner_), "step", false, inner_}};
}

// --- the graph-file factory ---------------------------------------------------------------

namespace {

// Reads ScanInfo from the `info` prop, naming the JSON pointer of a bad field.
class InfoReader {
 public:
  explicit InfoReader(PropReader& props) : info_(props.raw("info")), where_(props.where("info")) {
    if (!info_.is_object()) props.fail("info", "must be an object with ScanInfo's fields, not " + info_.dump());
  }

  int count(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000)
      fail(key, "must be a count (a non-negative integer), not " + v.dump());
    return static_cast<int>(v.get<std::int64_t>());
  }

  std::vector<ScanInfo::Taps> slices(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_array()) fail(key, "must be a list of tap lists, not " + v.dump());
    std::vector<ScanInfo::Taps> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = key + "/" + std::to_string(i);
      if (!v[i].is_array()) fail(at, "must be a list of integer taps, not " + v[i].dump());
      ScanInfo::Taps taps;
      for (const Json& t : v[i]) {
        if (!t.is_number_integer() || t.get<std::int64_t>() < -1000000 || t.get<std::int64_t>() > 1000000)
          fail(at, "must hold integer taps (|tap| <= 10^6), not " + t.dump());
        taps.push_back(t.get<std::int64_t>());
      }
      if (std::set<std::int64_t>(taps.begin(), taps.end()).size() != taps.size()) fail(at, "repeats a tap");
      out.push_back(taps);
    }
    return out;
  }

  bool flag(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_boolean()) fail(key, "must be true or false, not " + v.dump());
    return v.get<bool>();
  }

  // PyTensor 3.0's n_untraced_sit_sot, or 2.x's n_shared_outs (the same outputs by their old name).
  int untraced() {
    const bool now = info_.contains("n_untraced_sit_sot"), before = info_.contains("n_shared_outs");
    if (now && before) fail("n_shared_outs", "is PyTensor 2.x's name of n_untraced_sit_sot: give one of them");
    return before ? count("n_shared_outs") : count("n_untraced_sit_sot");
  }

  void finish() {
    for (auto it = info_.begin(); it != info_.end(); ++it)
      if (!read_.count(it.key())) fail(it.key(), "is not a field of ScanInfo");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw UserError("Scan: info field \"" + key.substr(0, key.find('/')) + "\" " + msg, where_ + "/" + key);
  }

 private:
  const Json& field(const std::string& key) {
    read_.insert(key);
    if (!info_.contains(key)) throw UserError("Scan: the info needs the field \"" + key + "\"", where_);
    return info_[key];
  }

  const Json& info_;
  std::string where_;
  std::set<std::string> read_;
};

ScanInfo read_info(PropReader& props) {
  InfoReader r(props);
  ScanInfo info;
  info.n_seqs = r.count("n_seqs");
  info.mit_mot_in_slices = r.slices("mit_mot_in_slices");
  info.mit_mot_out_slices = r.slices("mit_mot_out_slices");
  info.mit_sot_in_slices = r.slices("mit_sot_in_slices");
  info.sit_sot_in_slices = r.slices("sit_sot_in_slices");
  info.n_nit_sot = r.count("n_nit_sot");
  info.n_untraced_sit_sot = r.untraced();
  info.n_non_seqs = r.count("n_non_seqs");
  info.as_while = r.flag("as_while");
  r.finish();
  if (info.mit_mot_out_slices.size() != info.mit_mot_in_slices.size())
    r.fail("mit_mot_out_slices", "must have one tap list per mit-mot (" +
                                     std::to_string(info.mit_mot_in_slices.size()) + "), got " +
                                     std::to_string(info.mit_mot_out_slices.size()));
  for (int k = 0; k < info.n_tap_outs(); ++k) {
    const bool mit_mot = k < info.n_mit_mot(), sit_sot = k >= info.n_mit_mot() + info.n_mit_sot();
    const std::string key = mit_mot ? "mit_mot_in_slices/" + std::to_string(k)
                            : sit_sot ? "sit_sot_in_slices/" + std::to_string(k - info.n_mit_mot() - info.n_mit_sot())
                                      : "mit_sot_in_slices/" + std::to_string(k - info.n_mit_mot());
    const ScanInfo::Taps& taps = info.taps(k);
    if (taps.empty()) r.fail(key, "must hold at least one tap");
    if (!mit_mot && std::any_of(taps.begin(), taps.end(), [](std::int64_t t) { return t >= 0; }))
      r.fail(key, "must hold negative taps only (a step reads outputs of earlier steps), got " + Json(taps).dump());
    if (sit_sot && taps.size() != 1) r.fail(key, "must hold exactly one tap (a sit-sot reads one earlier step)");
  }
  return info;
}

}  // namespace

OpPtr scan_from_props(PropReader& props, const std::vector<TensorType>&) {
  ScanInfo info = read_info(props);
  const std::int64_t truncate = props.get_int("truncate_gradient", -1);
  std::string label = "scan_fn";
  if (props.has("name") && !props.raw("name").is_null()) label = props.get_string("name");
  props.raw("mode");
  props.raw("allow_gc");
  std::shared_ptr<const FunctionGraph> inner = props.get_inner_graph("inner");
  props.finish();
  const std::string why = scan_layout_error(info, *inner);
  if (!why.empty()) throw UserError("Scan: " + why, props.where("inner"));
  return std::make_shared<Scan>(std::move(info), std::move(inner), truncate, label);
}

namespace {

// Whether `v` is computed from nothing of `inner` but its constants: no inner input or node is
// among its ancestors (shape expressions of the step that the outer graph can evaluate).
bool free_of(const Var& v, const std::set<const Variable*>& inner_inputs, const std::set<const Apply*>& inner_nodes) {
  std::vector<const Variable*> todo = {v.get()};
  std::set<const Variable*> seen;
  while (!todo.empty()) {
    const Variable* x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second) continue;
    if (inner_inputs.count(x)) return false;
    const Apply* owner = x->owner();
    if (!owner) continue;
    if (inner_nodes.count(owner)) return false;
    for (const Var& in : owner->inputs()) todo.push_back(in.get());
  }
  return true;
}

}  // namespace

std::vector<ShapeVars> Scan::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  const ScanInfo& info = info_;
  if (info.as_while) return {};
  auto in_shape = [&](int i) -> const ShapeVars& { return input_shapes[static_cast<std::size_t>(i)]; };
  auto rows_of = [](const ShapeVars& s) { return ShapeVars(s.begin() + 1, s.end()); };
  std::vector<ShapeVars> out(static_cast<std::size_t>(node.num_outputs()));
  for (int k = 0; k < info.n_tap_outs(); ++k) out[static_cast<std::size_t>(k)] = in_shape(info.tap_buffers_begin() + k);
  for (int j = 0; j < info.n_untraced_sit_sot; ++j)
    out[static_cast<std::size_t>(info.untraced_outs_begin() + j)] = in_shape(info.untraced_begin() + j);
  if (info.n_nit_sot == 0) return out;

  // The step's shapes from the outer ones: a sequence's and a tap's rows, the others whole.
  const FunctionGraph& inner = *inner_;
  std::map<const Variable*, ShapeVars> shapes;
  for (int s = 0; s < info.n_seqs; ++s) shapes[inner.inputs()[static_cast<std::size_t>(s)].get()] = rows_of(in_shape(info.seqs_begin() + s));
  for (int k = 0; k < info.n_tap_outs(); ++k)
    for (std::size_t j = 0; j < info.taps(k).size(); ++j)
      shapes[inner.inputs()[static_cast<std::size_t>(info.inner_tap_input(k, static_cast<int>(j)))].get()] =
          rows_of(in_shape(info.tap_buffers_begin() + k));
  for (int j = 0; j < info.n_untraced_sit_sot; ++j)
    shapes[inner.inputs()[static_cast<std::size_t>(info.inner_untraced_begin() + j)].get()] = in_shape(info.untraced_begin() + j);
  for (int j = 0; j < info.n_non_seqs; ++j)
    shapes[inner.inputs()[static_cast<std::size_t>(info.inner_non_seqs_begin() + j)].get()] = in_shape(info.non_seqs_begin() + j);
  std::set<const Variable*> inner_inputs;
  for (const Var& v : inner.inputs()) inner_inputs.insert(v.get());
  const std::vector<Apply*> order = inner.toposort();
  const std::set<const Apply*> inner_nodes(order.begin(), order.end());
  auto shape_of = [&](const Var& v) -> ShapeVars {
    auto it = shapes.find(v.get());
    if (it != shapes.end()) return it->second;
    ShapeVars dims;  // a constant of the step
    for (int d = 0; d < v->ndim(); ++d) {
      const std::int64_t len = v->shape()[static_cast<std::size_t>(d)];
      dims.push_back(len != kUnknownLength ? int64_constant(len) : shape_i(v, d));
    }
    return dims;
  };
  for (const Apply* n : order) {
    std::vector<ShapeVars> ins;
    for (const Var& v : n->inputs()) ins.push_back(shape_of(v));
    std::vector<ShapeVars> outs = output_shapes(*n, ins);
    for (int o = 0; o < n->num_outputs(); ++o) shapes[n->output_ptr(o)] = outs[static_cast<std::size_t>(o)];
  }

  const Var has_steps = cast(node.input(0), DType::Int64) > int64_constant(0);
  for (int j = 0; j < info.n_nit_sot; ++j) {
    const int k = info.nit_sot_outs_begin() + j;
    ShapeVars dims = {switch_(has_steps, cast(node.input(info.nit_sot_lengths_begin() + j), DType::Int64), int64_constant(0))};
    const ShapeVars row = shape_of(inner.outputs()[static_cast<std::size_t>(info.inner_output_of(k))]);
    // With no steps every length is 0 (Scan.perform's empty nit-sot).
    for (std::size_t d = 0; d < row.size(); ++d)
      dims.push_back(free_of(row[d], inner_inputs, inner_nodes)
                         ? switch_(has_steps, row[d], int64_constant(0))
                         : shape_i(node.output(k), static_cast<int>(d) + 1));
    out[static_cast<std::size_t>(k)] = dims;
  }
  return out;
}

}  // namespace kiln
