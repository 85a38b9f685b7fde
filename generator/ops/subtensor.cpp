#include "ops/subtensor.h"

#include <array>

#include "ops/math.h"
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/scalar/scalar_op.h"
#include "ops/grad_util.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/batching.h"

namespace kiln {

// --- BasicIndex: the idx_list ------------------------------------------------------------------

int BasicIndex::num_inputs() const {
  int n = 0;
  for (const auto& e : entries_) n += e.num_inputs();
  return n;
}

int BasicIndex::num_dropped() const {
  int n = 0;
  for (const auto& e : entries_) n += e.is_slice ? 0 : 1;
  return n;
}

Json BasicIndex::to_json() const {
  Json list = Json::array();
  auto part = [](bool present) { return present ? Json("input") : Json(nullptr); };
  for (const auto& e : entries_) {
    if (e.is_slice)
      list.push_back(
          Json{{"slice", Json::array({part(e.has_start), part(e.has_stop), part(e.has_step)})}});
    else
      list.push_back(Json{{"index", "input"}});
  }
  return list;
}

std::array<bool, 3> read_slice_entry(const Json& e, const std::string& what, const std::string& at) {
  const Json& s = e["slice"];
  if (!s.is_array() || s.size() != 3) throw UserError(what + ", not " + e.dump(), at + "/slice");
  std::array<bool, 3> present{};
  for (std::size_t p = 0; p < 3; ++p) {
    if (!s[p].is_null() && s[p] != "input")
      throw UserError(what + ", not " + e.dump(), at + "/slice/" + std::to_string(p));
    present[p] = !s[p].is_null();
  }
  return present;
}

BasicIndex BasicIndex::from_json(const Json& j, const PropReader& props, const std::string& key) {
  if (!j.is_array()) props.fail(key, "must be a list of index entries, not " + j.dump());
  const std::string what =
      props.op_name() +
      ": an idx_list entry is {\"index\": \"input\"} or {\"slice\": [start, stop, "
      "step]} with each part null or \"input\"";
  std::vector<IndexEntry> entries;
  for (std::size_t k = 0; k < j.size(); ++k) {
    const Json& e = j[k];
    const std::string at = props.where(key) + "/" + std::to_string(k);
    if (!e.is_object() || e.size() != 1) throw UserError(what + ", not " + e.dump(), at);
    if (e.contains("index")) {
      if (e["index"] != "input") throw UserError(what + ", not " + e.dump(), at + "/index");
      entries.push_back(IndexEntry::integer());
    } else if (e.contains("slice")) {
      const std::array<bool, 3> present = read_slice_entry(e, what, at);
      entries.push_back(IndexEntry::slice(present[0], present[1], present[2]));
    } else if (e.contains("newaxis")) {
      throw UserError(props.op_name() + ": newaxis entries belong to AdvancedSubtensor only", at);
    } else {
      throw UserError(what + ", not " + e.dump(), at);
    }
  }
  return BasicIndex(std::move(entries));
}

std::string BasicIndex::str() const {
  std::string s;
  int letters = 0;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    const IndexEntry& e = entries_[k];
    if (k) s += ", ";
    if (!e.is_slice) {
      s += std::string(static_cast<std::size_t>(letters / 3 + 1), "ijk"[letters % 3]);
      ++letters;
    } else if (e.has_step) {
      s += std::string(e.has_start ? "start" : "") + ":" + (e.has_stop ? "stop" : "") + ":step";
    } else if (e.has_stop) {
      s += std::string(e.has_start ? "start" : "") + ":stop";
    } else {
      s += e.has_start ? "start:" : ":";
    }
  }
  return s;
}

namespace {

/// The slice parts (start, stop, step) of entry `e`, taken from `ints` at `pos` (null = omitted).
std::array<Var, 3> slice_parts(const IndexEntry& e, const VarList& ints, std::size_t& pos) {
  std::array<Var, 3> parts;
  const bool present[3] = {e.has_start, e.has_stop, e.has_step};
  for (std::size_t p = 0; p < 3; ++p)
    if (present[p]) parts[p] = ints[pos++];
  return parts;
}

}  // namespace

Shape BasicIndex::static_shape(const Op& who, const TensorType& x, const VarList& ints) const {
  if (static_cast<int>(ints.size()) != num_inputs())
    type_error(who, "its idx_list takes " + std::to_string(num_inputs()) +
                        " integer input(s) after the tensor(s), got " +
                        std::to_string(ints.size()));
  for (std::size_t k = 0; k < ints.size(); ++k) {
    const TensorType& t = ints[k]->type();
    if (t.ndim() != 0 || !is_integer(t.dtype))
      type_error(who, "index input " + std::to_string(k) + " (" + ints[k]->label() +
                          ") must be a 0-d integer, got " + t.str());
  }
  if (static_cast<int>(entries_.size()) > x.ndim())
    type_error(who, "too many indices (" + std::to_string(entries_.size()) +
                        ") for a tensor of rank " + std::to_string(x.ndim()));
  Shape shape;
  std::size_t pos = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(x.ndim()); ++d) {
    if (d >= entries_.size()) {
      shape.push_back(x.shape[d]);
      continue;
    }
    const IndexEntry& e = entries_[d];
    if (!e.is_slice) {
      ++pos;
      continue;
    }
    auto parts = slice_parts(e, ints, pos);
    std::optional<std::int64_t> value[3];
    bool all_constant = true;
    for (std::size_t p = 0; p < 3; ++p) {
      if (!parts[p]) continue;
      value[p] = constant_int(parts[p]);
      all_constant = all_constant && value[p].has_value();
    }
    if (value[2] && *value[2] == 0) type_error(who, "slice step cannot be zero");
    if (x.shape[d] == kUnknownLength || !all_constant)
      shape.push_back(kUnknownLength);
    else
      shape.push_back(resolve_slice(value[0], value[1], value[2], x.shape[d]).count);
  }
  return shape;
}

namespace {

Var as_int64(const Var& v) { return cast(v, DType::Int64); }

/// Python's slice.indices bound for a positive step: v + n when negative, clipped to [0, n].
Var bound_pos_step(const Var& v, const Var& n) {
  Var w = as_int64(v);
  return clip(switch_(lt(w, 0), w + n, w), int64_constant(0), n);
}

/// ... and for a negative step: v + n when negative, clipped to [-1, n - 1].
Var bound_neg_step(const Var& v, const Var& n) {
  Var w = as_int64(v);
  return clip(switch_(lt(w, 0), w + n, w), int64_constant(-1), n - 1);
}

}  // namespace

Var slice_length(const Var& n, const std::array<Var, 3>& parts) {
  const Var& start = parts[0];
  const Var& stop = parts[1];
  const Var& step = parts[2];
  auto cn = constant_int(n);
  std::optional<std::int64_t> cv[3];
  bool all_constant = cn.has_value();
  for (std::size_t p = 0; p < 3; ++p)
    if (parts[p]) {
      cv[p] = constant_int(parts[p]);
      all_constant = all_constant && cv[p].has_value();
    }
  if (all_constant) return int64_constant(resolve_slice(cv[0], cv[1], cv[2], *cn).count);
  std::optional<std::int64_t> cstep = step ? cv[2] : std::optional<std::int64_t>(1);
  if (!start && !stop && cstep) {
    std::int64_t s = *cstep < 0 ? -*cstep : *cstep;
    return s == 1 ? n : int_div(n + (s - 1), int64_constant(s));  // x[::s], x[::-s]
  }
  auto length_pos = [&](const Var& s) {  // s > 0
    Var a = start ? bound_pos_step(start, n) : int64_constant(0);
    Var b = stop ? bound_pos_step(stop, n) : n;
    return maximum(int64_constant(0), int_div(b - a + s - 1, s));
  };
  auto length_neg = [&](const Var& abs_s) {  // step = -abs_s < 0
    Var a = start ? bound_neg_step(start, n) : n - 1;
    Var b = stop ? bound_neg_step(stop, n) : int64_constant(-1);
    return maximum(int64_constant(0), int_div(a - b + abs_s - 1, abs_s));
  };
  if (cstep)
    return *cstep > 0 ? length_pos(int64_constant(*cstep)) : length_neg(int64_constant(-*cstep));
  Var s = as_int64(step);
  return switch_(gt(s, 0), length_pos(s), length_neg(-s));
}

ShapeVars BasicIndex::symbolic_shape(const ShapeVars& x_shape, const VarList& ints) const {
  ShapeVars out;
  std::size_t pos = 0;
  for (std::size_t d = 0; d < x_shape.size(); ++d) {
    if (d >= entries_.size()) {
      out.push_back(x_shape[d]);
    } else if (!entries_[d].is_slice) {
      ++pos;
    } else {
      out.push_back(slice_length(x_shape[d], slice_parts(entries_[d], ints, pos)));
    }
  }
  return out;
}

void index_out_of_bounds(std::int64_t index, int axis, std::int64_t size) {
  throw RuntimeFailure("index " + std::to_string(index) + " is out of bounds for axis " +
                       std::to_string(axis) + " with size " + std::to_string(size));
}

Array BasicIndex::apply(const Array& x, const std::vector<Array>& ints) const {
  std::vector<std::int64_t> values;
  for (const Array& a : ints) values.push_back(scalar_to_int64(a));
  Shape shape, strides;
  std::int64_t offset = 0;
  std::size_t pos = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(x.ndim()); ++d) {
    const std::int64_t length = x.shape()[d];
    const std::int64_t stride = x.strides()[d];
    if (d >= entries_.size()) {
      shape.push_back(length);
      strides.push_back(stride);
      continue;
    }
    const IndexEntry& e = entries_[d];
    if (!e.is_slice) {
      std::int64_t i = values[pos++];
      std::int64_t j = i < 0 ? i + length : i;
      if (j < 0 || j >= length) index_out_of_bounds(i, static_cast<int>(d), length);
      offset += j * stride;
      continue;
    }
    std::optional<std::int64_t> part[3];
    const bool present[3] = {e.has_start, e.has_stop, e.has_step};
    for (std::size_t p = 0; p < 3; ++p)
      if (present[p]) part[p] = values[pos++];
    SliceRange r = resolve_slice(part[0], part[1], part[2], length);
    if (r.count > 0) offset += r.start * stride;  // an empty view keeps the base pointer
    shape.push_back(r.count);
    strides.push_back(stride * r.step);
  }
  return x.view(shape, strides, offset);
}

// --- value writes shared with the advanced indexing ops ------------------------------------------

void increment_into(Array target, const Array& value) {
  const DType wide = upcast(target.dtype(), value.dtype());
  Array a = astype(target, wide);
  Array b = astype(value, wide);
  Array sum = Array::empty(wide, target.shape());
  visit_dtype(wide, [&](auto t) {
    using T = decltype(t);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* ps = sum.data<T>();
    for (std::int64_t i = 0, n = sum.size(); i < n; ++i)
      ps[i] = kiln_scalar::wrap_add(pa[i], pb[i]);
  });
  astype(sum, target.dtype()).copy_into(target);
}

void assign_into(Array target, const Array& value) {
  astype(value, target.dtype()).copy_into(target);
}

void check_value_type(const Op& who, const TensorType& y, const Shape& target) {
  const int k = static_cast<int>(target.size());
  if (y.ndim() > k)
    type_error(who, "trying to write a " + std::to_string(y.ndim()) + "-dimensional value into a " +
                        std::to_string(k) + "-dimensional subtensor");
  const int off = k - y.ndim();
  for (int d = 0; d < y.ndim(); ++d) {
    std::int64_t ly = y.shape[static_cast<std::size_t>(d)];
    std::int64_t lt = target[static_cast<std::size_t>(off + d)];
    if (ly != kUnknownLength && lt != kUnknownLength && ly != 1 && ly != lt)
      type_error(who, "a value of shape " + y.shape_str() +
                          " does not broadcast to the indexed shape " +
                          TensorType(y.dtype, target).shape_str());
  }
}

namespace {

/// NumPy's casting kinds in "same_kind" order: bool < unsigned < signed < float.
int kind_rank(DType dt) {
  if (is_bool(dt)) return 0;
  if (is_unsigned_int(dt)) return 1;
  if (is_signed_int(dt)) return 2;
  return 3;
}

/// NumPy's `x += y` casts the sum (of dtype upcast(x, y)) back to x's dtype with "same_kind"
/// casting, which refuses e.g. float into int, int into bool, signed into unsigned.
bool increment_castable(DType x, DType y) { return kind_rank(upcast(x, y)) <= kind_rank(x); }

}  // namespace

// --- Subtensor ---------------------------------------------------------------------------------

std::vector<TensorType> Subtensor::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "needs the tensor to index");
  const TensorType& x = inputs[0]->type();
  VarList ints(inputs.begin() + 1, inputs.end());
  return {TensorType(x.dtype, index_.static_shape(*this, x, ints))};
}

void Subtensor::perform(const Apply&, const std::vector<Array>& inputs,
                        std::vector<Array>& outputs) const {
  outputs[0] = index_.apply(inputs[0], std::vector<Array>(inputs.begin() + 1, inputs.end()));
}

std::vector<ShapeVars> Subtensor::infer_shape(const Apply& node,
                                              const std::vector<ShapeVars>& input_shapes) const {
  VarList ints(node.inputs().begin() + 1, node.inputs().end());
  return {index_.symbolic_shape(input_shapes[0], ints)};
}

// --- IncSubtensor ------------------------------------------------------------------------------

std::vector<TensorType> IncSubtensor::infer_types(const VarList& inputs) const {
  if (inputs.size() < 2) type_error(*this, "needs the tensor and the value");
  const TensorType& x = inputs[0]->type();
  const TensorType& y = inputs[1]->type();
  VarList ints(inputs.begin() + 2, inputs.end());
  Shape target = index_.static_shape(*this, x, ints);
  check_value_type(*this, y, target);
  if (!set_ && !increment_castable(x.dtype, y.dtype))
    type_error(*this, "cannot increment a " + std::string(dtype_name(x.dtype)) + " tensor by a " +
                          std::string(dtype_name(y.dtype)) +
                          " value (NumPy's same_kind casting, as PyTensor: cast the value first)");
  return {x};
}

void IncSubtensor::perform(const Apply&, const std::vector<Array>& inputs,
                           std::vector<Array>& outputs) const {
  Array out = inputs[0].copy();  // never writes into x
  Array region = index_.apply(out, std::vector<Array>(inputs.begin() + 2, inputs.end()));
  Array value = broadcast_to(inputs[1], region.shape());
  if (set_)
    assign_into(region, value);
  else
    increment_into(region, value);
  outputs[0] = out;
}

std::vector<ShapeVars> IncSubtensor::infer_shape(const Apply&,
                                                 const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- builder API -------------------------------------------------------------------------------

IndexItem IndexItem::integer(IndexScalar i) {
  if (i.omitted()) throw UserError("idx: an integer index cannot be omitted");
  IndexItem item;
  item.parts_.push_back(std::move(i));
  return item;
}

IndexItem IndexItem::range(IndexScalar start, IndexScalar stop, IndexScalar step) {
  IndexItem item;
  item.is_slice_ = true;
  item.parts_ = {std::move(start), std::move(stop), std::move(step)};
  return item;
}

void require_var(const Var& v, const char* fn, const char* what) {
  if (!v) throw UserError(std::string(fn) + ": " + what + " is a null Var");
}

namespace {

/// The idx_list and integer inputs of an index expression.
std::pair<BasicIndex, VarList> lower_index(const std::vector<IndexItem>& index) {
  std::vector<IndexEntry> entries;
  VarList ints;
  for (const IndexItem& item : index) {
    const auto& p = item.parts();
    if (!item.is_slice()) {
      entries.push_back(IndexEntry::integer());
    } else {
      entries.push_back(IndexEntry::slice(!p[0].omitted(), !p[1].omitted(), !p[2].omitted()));
    }
    for (const IndexScalar& s : p)
      if (!s.omitted()) ints.push_back(s.var());
  }
  return {BasicIndex(std::move(entries)), std::move(ints)};
}

Var build_inc(const Var& x, const std::vector<IndexItem>& index, const Var& y, bool set,
              const char* fn) {
  require_var(x, fn, "the tensor");
  require_var(y, fn, "the value");
  auto [pattern, ints] = lower_index(index);
  VarList inputs{x, y};
  inputs.insert(inputs.end(), ints.begin(), ints.end());
  return apply1(std::make_shared<IncSubtensor>(std::move(pattern), set), std::move(inputs));
}

}  // namespace

Var subtensor(const Var& x, const std::vector<IndexItem>& index) {
  require_var(x, "subtensor", "the tensor");
  auto [pattern, ints] = lower_index(index);
  VarList inputs{x};
  inputs.insert(inputs.end(), ints.begin(), ints.end());
  return apply1(std::make_shared<Subtensor>(std::move(pattern)), std::move(inputs));
}

Var at(const Var& x, IndexScalar i) { return subtensor(x, {idx(std::move(i))}); }

Var inc_subtensor(const Var& x, const std::vector<IndexItem>& index, const Var& y) {
  return build_inc(x, index, y, false, "inc_subtensor");
}

Var set_subtensor(const Var& x, const std::vector<IndexItem>& index, const Var& y) {
  return build_inc(x, index, y, true, "set_subtensor");
}

// --- graph-file factories ----------------------------------------------------------------------

OpPtr subtensor_from_props(PropReader& props, const std::vector<TensorType>&) {
  const Json& list = props.raw("idx_list");
  props.finish();
  if (list.is_null()) props.fail("idx_list", "is required");
  return std::make_shared<Subtensor>(BasicIndex::from_json(list, props, "idx_list"));
}

OpPtr inc_subtensor_from_props(PropReader& props, const std::vector<TensorType>&) {
  const Json& list = props.raw("idx_list");
  bool set = props.get_bool("set_instead_of_inc", false);
  props.finish();
  if (list.is_null()) props.fail("idx_list", "is required");
  return std::make_shared<IncSubtensor>(BasicIndex::from_json(list, props, "idx_list"), set);
}

// --- gradients ------------------------------------------------------------------------------

Var sum_to_value(const Var& g, const Var& y) {
  Var r = sum_to_type(g, y->type());
  const int nd = y->ndim();
  for (int d = 0; d < nd; ++d) {
    if (y->shape()[static_cast<std::size_t>(d)] != kUnknownLength || r->type().broadcastable(d)) continue;
    Var len = shape_i(y, d);
    Var summed = expand_reduced(sum(r, {d}), nd, {d});
    Var chosen = switch_(eq(len, 1), summed, r);
    std::vector<IndexItem> index(static_cast<std::size_t>(d), slice());
    index.push_back(slice(none, len));
    r = subtensor(chosen, index);
  }
  return r;
}

namespace {

VarList index_inputs(const Apply& node, int first) {
  return VarList(node.inputs().begin() + first, node.inputs().end());
}

VarList concat(VarList a, const VarList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::vector<GradTerm> Subtensor::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return terms;
  Var g = cast(output_grads[0], x->dtype());
  terms[0] = GradTerm::of(apply1(std::make_shared<IncSubtensor>(index_, false),
                                 concat({zeros_like(x, x->dtype()), g}, index_inputs(node, 1))));
  return terms;
}

std::vector<GradTerm> Subtensor::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> IncSubtensor::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& g = output_grads[0];
  const VarList ints = index_inputs(node, 2);
  if (is_float(x->dtype())) {
    Var gx = g;
    if (set_)  // the overwritten region does not reach the output
      gx = apply1(std::make_shared<IncSubtensor>(index_, true), concat({g, const_like(g, 0)}, ints));
    terms[0] = GradTerm::of(cast_grad(gx, x->dtype()));
  }
  if (is_float(y->dtype())) {
    Var region = apply1(std::make_shared<Subtensor>(index_), concat({g}, ints));
    terms[1] = GradTerm::of(sum_to_value(region, y));
  }
  return terms;
}

std::vector<GradTerm> IncSubtensor::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

namespace {

// Full slices over the batch dimensions in front of an index pattern.
BasicIndex with_batch_slices(const BasicIndex& index, int b) {
  std::vector<IndexEntry> entries(static_cast<std::size_t>(b), IndexEntry::slice(false, false, false));
  entries.insert(entries.end(), index.entries().begin(), index.entries().end());
  return BasicIndex(entries);
}

// The same pattern as an advanced index: an integer entry becomes a 0-d index array, which
// NumPy lays out as the integer (one advanced entry of rank 0 adds no dimension).
AdvancedIndex as_advanced(const BasicIndex& index) {
  std::vector<AdvancedEntry> entries;
  for (const IndexEntry& e : index.entries())
    entries.push_back(e.is_slice ? AdvancedEntry::slice(e.has_start, e.has_stop, e.has_step) : AdvancedEntry::index());
  return AdvancedIndex(entries);
}

}  // namespace

std::optional<VarList> Subtensor::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  if (std::any_of(b.begin() + 1, b.end(), [](int d) { return d != 0; })) {
    // Batched integer indices: x[:, i] is the advanced index x[:, array(i)], whose rule
    // batches index arrays. Batched slice bounds stay refused (by that rule).
    auto advanced = std::make_shared<AdvancedSubtensor>(as_advanced(index_));
    ApplyPtr core = make_node(advanced, node.inputs());
    return advanced->vectorize(*core, batched_inputs);
  }
  return make_node(std::make_shared<Subtensor>(with_batch_slices(index_, b[0])), batched_inputs)->outputs();
}

std::optional<VarList> IncSubtensor::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  if (std::any_of(b.begin() + 2, b.end(), [](int d) { return d != 0; })) {
    // Batched integer indices, as in Subtensor::vectorize: each batch writes its own rows, so
    // accumulating (np.add.at) and plain increments agree.
    auto advanced = std::make_shared<AdvancedIncSubtensor>(as_advanced(index_), set_, false);
    ApplyPtr core = make_node(advanced, node.inputs());
    return advanced->vectorize(*core, batched_inputs);
  }
  const int nb = max_batch_dims(b);
  check_unbatched_from(node, b, 2);
  VarList xy = with_full_batch({batched_inputs[0], batched_inputs[1]}, {b[0], b[1]}, nb);
  const int core = node.input(0)->ndim() - index_.num_dropped();
  VarList args{xy[0], pad_core(xy[1], nb, core)};
  args.insert(args.end(), batched_inputs.begin() + 2, batched_inputs.end());
  auto batched = std::make_shared<IncSubtensor>(with_batch_slices(index_, nb), set_);
  return make_node(batched, args)->outputs();
}

}  // namespace kiln
