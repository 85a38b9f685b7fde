#include "ops/advanced_subtensor.h"

#include <cstring>
#include <limits>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/alloc.h"
#include "ops/reshape.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/batching.h"
#include "ops/dimshuffle.h"

namespace kiln {

namespace {

/// Checks that `idx` is an integer vector (PyTensor's "index must be integers" / "vector").
void check_index_vector(const Op& who, const Var& idx) {
  const TensorType& t = idx->type();
  if (t.ndim() != 1 || !is_integer(t.dtype))
    type_error(who, "the index (" + idx->label() + ") must be an integer vector, got " + t.str());
}

void check_indexable(const Op& who, const Var& x) {
  if (x->ndim() == 0) type_error(who, "cannot index into a 0-d tensor (" + x->label() + ")");
}

/// The rows idx selects: (len(idx), *x.shape[1:]) as a static shape.
Shape selected_shape(const TensorType& x, const TensorType& idx) {
  Shape s{idx.shape[0]};
  s.insert(s.end(), x.shape.begin() + 1, x.shape.end());
  return s;
}

/// The indices as int64, negative ones counted from the end; out of range is a RuntimeFailure.
std::vector<std::int64_t> read_indices(const Array& idx, std::int64_t length) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(idx.size()));
  visit_real_dtype(idx.dtype(), [&](auto t) {
    using T = decltype(t);
    idx.for_each_index([&](const std::int64_t* at) {
      T v = *static_cast<const T*>(idx.element_ptr(at));
      if constexpr (std::is_same_v<T, std::uint64_t>) {
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw RuntimeFailure("index " + std::to_string(v) +
                               " is out of bounds for axis 0 with size " + std::to_string(length));
      }
      std::int64_t i = static_cast<std::int64_t>(v);
      std::int64_t j = i < 0 ? i + length : i;
      if (j < 0 || j >= length) index_out_of_bounds(i, 0, length);
      out.push_back(j);
    });
  });
  return out;
}

}  // namespace

// --- AdvancedSubtensor1 ------------------------------------------------------------------------

std::vector<TensorType> AdvancedSubtensor1::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2)
    type_error(*this, "takes 2 inputs (x, idx), got " + std::to_string(inputs.size()));
  check_indexable(*this, inputs[0]);
  check_index_vector(*this, inputs[1]);
  return {TensorType(inputs[0]->dtype(), selected_shape(inputs[0]->type(), inputs[1]->type()))};
}

void AdvancedSubtensor1::perform(const Apply&, const std::vector<Array>& inputs,
                                 std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  std::vector<std::int64_t> rows = read_indices(inputs[1], x.shape()[0]);
  Shape shape = x.shape();
  shape[0] = static_cast<std::int64_t>(rows.size());
  Array out = Array::empty(x.dtype(), shape);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Array dst = row_view(out, static_cast<std::int64_t>(i));
    row_view(x, rows[i]).copy_into(dst);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedSubtensor1::infer_shape(
    const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims{input_shapes[1][0]};
  dims.insert(dims.end(), input_shapes[0].begin() + 1, input_shapes[0].end());
  return {dims};
}

// --- AdvancedIncSubtensor1 ---------------------------------------------------------------------

std::string AdvancedIncSubtensor1::str() const {
  return std::string("AdvancedIncSubtensor1{no_inplace,") + (set_ ? "set" : "inc") +
         (ignore_duplicates_ ? ",ignore_duplicates}" : "}");
}

std::vector<TensorType> AdvancedIncSubtensor1::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3)
    type_error(*this, "takes 3 inputs (x, y, idx), got " + std::to_string(inputs.size()));
  check_indexable(*this, inputs[0]);
  check_index_vector(*this, inputs[2]);
  check_value_type(*this, inputs[1]->type(), selected_shape(inputs[0]->type(), inputs[2]->type()));
  return {inputs[0]->type()};
}

namespace {

/// PyTensor refuses to broadcast a length-1 dimension of y that is not statically 1.
void check_runtime_broadcast(const TensorType& y_type, const Shape& y_shape, const Shape& target) {
  const std::size_t off = target.size() - y_shape.size();
  for (std::size_t d = 0; d < y_shape.size(); ++d)
    if (y_shape[d] == 1 && target[off + d] != 1 && y_type.shape[d] != 1)
      throw RuntimeFailure(
          "Runtime broadcasting not allowed. AdvancedIncSubtensor1 was asked to broadcast the "
          "second "
          "input (y) along a dimension that was not marked as broadcastable. If broadcasting was "
          "intended, use `specify_broadcastable` on the relevant dimension(s).");
}

}  // namespace

void AdvancedIncSubtensor1::perform(const Apply& node, const std::vector<Array>& inputs,
                                    std::vector<Array>& outputs) const {
  Array out = inputs[0].copy();  // never writes into x
  std::vector<std::int64_t> rows = read_indices(inputs[2], out.shape()[0]);
  Shape target = out.shape();
  target[0] = static_cast<std::int64_t>(rows.size());
  check_runtime_broadcast(node.input(1)->type(), inputs[1].shape(), target);
  Array value = broadcast_to(inputs[1], target);
  const auto n = static_cast<std::int64_t>(rows.size());
  if (set_) {
    for (std::int64_t i = 0; i < n; ++i)
      assign_into(row_view(out, rows[static_cast<std::size_t>(i)]), row_view(value, i));
  } else if (!ignore_duplicates_) {
    for (std::int64_t i = 0; i < n; ++i)
      increment_into(row_view(out, rows[static_cast<std::size_t>(i)]), row_view(value, i));
  } else {
    // NumPy's x[idx] += y: gather every row first, add, then scatter (the last write wins).
    Array gathered = Array::empty(out.dtype(), target);
    for (std::int64_t i = 0; i < n; ++i) {
      Array dst = row_view(gathered, i);
      row_view(out, rows[static_cast<std::size_t>(i)]).copy_into(dst);
    }
    increment_into(gathered, value);
    for (std::int64_t i = 0; i < n; ++i) {
      Array dst = row_view(out, rows[static_cast<std::size_t>(i)]);
      row_view(gathered, i).copy_into(dst);
    }
  }
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedIncSubtensor1::infer_shape(
    const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- builder API -------------------------------------------------------------------------------

Var take(const Var& x, const Var& idx) {
  require_var(x, "take", "the tensor");
  require_var(idx, "take", "the index");
  return apply1(std::make_shared<AdvancedSubtensor1>(), {x, idx});
}

Var take(const Var& x, const std::vector<std::int64_t>& idx) {
  return take(x, int64_vector_constant(idx));
}

Var advanced_inc_subtensor1(const Var& x, const Var& y, const Var& idx, bool set_instead_of_inc,
                            bool ignore_duplicates) {
  require_var(x, "advanced_inc_subtensor1", "the tensor");
  require_var(y, "advanced_inc_subtensor1", "the value");
  require_var(idx, "advanced_inc_subtensor1", "the index");
  return apply1(std::make_shared<AdvancedIncSubtensor1>(set_instead_of_inc, ignore_duplicates),
                {x, y, idx});
}

Var inc_take(const Var& x, const Var& idx, const Var& y, bool ignore_duplicates) {
  return advanced_inc_subtensor1(x, y, idx, false, ignore_duplicates);
}

Var set_take(const Var& x, const Var& idx, const Var& y) {
  return advanced_inc_subtensor1(x, y, idx, true);
}

// --- graph-file factories ----------------------------------------------------------------------

OpPtr advanced_subtensor1_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<AdvancedSubtensor1>();
}

OpPtr advanced_inc_subtensor1_from_props(PropReader& props, const std::vector<TensorType>&) {
  bool set = props.get_bool("set_instead_of_inc", false);
  bool ignore_duplicates = props.get_bool("ignore_duplicates", false);
  props.finish();
  return std::make_shared<AdvancedIncSubtensor1>(set, ignore_duplicates);
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> AdvancedSubtensor1::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return repeat_term(2, GradTerm::disconnected());
  // Repeated indices accumulate, as they should for a gradient.
  Var gx = advanced_inc_subtensor1(zeros_like(x, x->dtype()), cast(output_grads[0], x->dtype()), node.input(1));
  return {GradTerm::of(gx), GradTerm::disconnected()};
}

std::vector<GradTerm> AdvancedSubtensor1::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> AdvancedIncSubtensor1::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& idx = node.input(2);
  const Var& g = output_grads[0];
  std::vector<GradTerm> terms(3, GradTerm::disconnected());
  if (is_float(x->dtype()))
    terms[0] = GradTerm::of(set_ ? advanced_inc_subtensor1(g, zeros_like(y, g->dtype()), idx, true) : g);
  if (is_float(y->dtype())) terms[1] = GradTerm::of(sum_to_type(take(g, idx), y->type()));
  return terms;
}

std::vector<GradTerm> AdvancedIncSubtensor1::pushforward(const Apply& node,
                                                         const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> AdvancedSubtensor1::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  check_unbatched_from(node, b, 1);
  const int nd = batched_inputs[0]->ndim();
  Var front = dimshuffle(batched_inputs[0], to_front(nd, nb));
  return VarList{dimshuffle(take(front, batched_inputs[1]), from_front(nd, nb))};
}

std::optional<VarList> AdvancedIncSubtensor1::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  check_unbatched_from(node, b, 2);
  VarList xy = with_full_batch({batched_inputs[0], batched_inputs[1]}, {b[0], b[1]}, nb);
  const int nd = xy[0]->ndim();
  Var x = dimshuffle(xy[0], to_front(nd, nb));
  Var y = dimshuffle(pad_core(xy[1], nb, node.input(0)->ndim()), to_front(nd, nb));
  auto same = std::make_shared<AdvancedIncSubtensor1>(set_, ignore_duplicates_);
  return VarList{dimshuffle(apply1(same, {x, y, batched_inputs[2]}), from_front(nd, nb))};
}

}  // namespace kiln

// --- AdvancedSubtensor and AdvancedIncSubtensor ------------------------------------------------

namespace kiln {

namespace {

VarList inputs_from(const Apply& node, int first) {
  return VarList(node.inputs().begin() + first, node.inputs().end());
}

std::vector<Array> arrays_from(const std::vector<Array>& inputs, std::size_t first) {
  return std::vector<Array>(inputs.begin() + static_cast<std::ptrdiff_t>(first), inputs.end());
}

/// PyTensor checks, for a single integer vector index (idx_list=(0,)), that y does not
/// broadcast a length-1 dimension that is not statically 1.
bool is_single_vector_index(const AdvancedIndex& index, const AdvancedLayout& layout) {
  return index.entries().size() == 1 && index.entries()[0].kind == AdvancedEntry::Kind::Index &&
         layout.parts[0].kind == AdvancedLayout::Part::Kind::Array && layout.parts[0].ndim == 1;
}

}  // namespace

AdvancedLayout AdvancedSubtensor::layout(const Apply& node) const {
  return advanced_layout(*this, index_, node.input(0)->type(), inputs_from(node, 1));
}

std::vector<TensorType> AdvancedSubtensor::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "needs the tensor to index");
  const TensorType& x = inputs[0]->type();
  VarList index(inputs.begin() + 1, inputs.end());
  AdvancedLayout lay = advanced_layout(*this, index_, x, index);
  return {TensorType(x.dtype, advanced_static_shape(*this, lay, x, index))};
}

void AdvancedSubtensor::perform(const Apply& node, const std::vector<Array>& inputs,
                                std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  ResolvedAdvancedIndex r(layout(node), x, arrays_from(inputs, 1));
  Array out = Array::empty(x.dtype(), r.shape());
  const auto size = static_cast<std::int64_t>(x.itemsize());
  char* q = static_cast<char*>(out.data());
  const char* p = static_cast<const char*>(x.data());
  r.for_each([&](std::int64_t pos, std::int64_t off) {
    std::memcpy(q + pos * size, p + off * size, static_cast<std::size_t>(size));
  });
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedSubtensor::infer_shape(const Apply& node,
                                                      const std::vector<ShapeVars>& input_shapes) const {
  std::vector<ShapeVars> index_shapes(input_shapes.begin() + 1, input_shapes.end());
  return {advanced_symbolic_shape(layout(node), input_shapes[0], inputs_from(node, 1), index_shapes)};
}

AdvancedLayout AdvancedIncSubtensor::layout(const Apply& node) const {
  return advanced_layout(*this, index_, node.input(0)->type(), inputs_from(node, 2));
}

std::vector<TensorType> AdvancedIncSubtensor::infer_types(const VarList& inputs) const {
  if (inputs.size() < 2) type_error(*this, "needs the tensor and the value");
  const TensorType& x = inputs[0]->type();
  VarList index(inputs.begin() + 2, inputs.end());
  AdvancedLayout lay = advanced_layout(*this, index_, x, index);
  check_value_type(*this, inputs[1]->type(), advanced_static_shape(*this, lay, x, index));
  return {x};
}

namespace {

/// out[offset] = out[offset] + value[pos] for every element of the region in order (np.add.at:
/// repeated positions accumulate), computed in upcast(out, value) and converted back.
void accumulate(Array& out, const Array& value, const ResolvedAdvancedIndex& r) {
  const DType wide = upcast(out.dtype(), value.dtype());
  Array v = astype(value, wide);  // C-contiguous, region-shaped
  visit_dtype(out.dtype(), [&](auto tx) {
    using X = decltype(tx);
    visit_dtype(wide, [&](auto tw) {
      using W = decltype(tw);
      X* q = out.data<X>();
      const W* pv = v.data<W>();
      r.for_each([&](std::int64_t pos, std::int64_t off) {
        q[off] = kiln_scalar::convert<X>(kiln_scalar::wrap_add(kiln_scalar::convert<W>(q[off]), pv[pos]));
      });
    });
  });
}

/// out[offset] = src[pos] for every element of the region in order (the last write wins).
void assign(Array& out, const Array& src, const ResolvedAdvancedIndex& r) {
  Array v = astype(src, out.dtype());
  const auto size = static_cast<std::int64_t>(out.itemsize());
  char* q = static_cast<char*>(out.data());
  const char* p = static_cast<const char*>(v.data());
  r.for_each([&](std::int64_t pos, std::int64_t off) {
    std::memcpy(q + off * size, p + pos * size, static_cast<std::size_t>(size));
  });
}

}  // namespace

void AdvancedIncSubtensor::perform(const Apply& node, const std::vector<Array>& inputs,
                                   std::vector<Array>& outputs) const {
  Array out = inputs[0].copy();  // never writes into x; C-contiguous
  const AdvancedLayout lay = layout(node);
  ResolvedAdvancedIndex r(lay, out, arrays_from(inputs, 2));
  const Array& y = inputs[1];
  const Shape& region = r.shape();
  if (is_single_vector_index(index_, lay)) {
    const Shape& y_static = node.input(1)->shape();
    const std::size_t off = region.size() - static_cast<std::size_t>(y.ndim());
    for (std::size_t d = 0; d < static_cast<std::size_t>(y.ndim()); ++d)
      if (y.shape()[d] == 1 && region[off + d] != 1 && y_static[d] != 1)
        throw RuntimeFailure(
            "Runtime broadcasting not allowed. AdvancedIncSubtensor was asked to broadcast the second input (y) "
            "along a dimension that was not marked as broadcastable. If broadcasting was intended, use "
            "`specify_broadcastable` on the relevant dimension(s).");
  }
  Array value;
  try {
    value = broadcast_to(y, region);
  } catch (const RuntimeFailure&) {
    throw RuntimeFailure("shape mismatch: value array of shape " + shape_str(y.shape()) +
                         " could not be broadcast to indexing result of shape " + shape_str(region));
  }
  if (set_) {
    assign(out, value, r);
  } else if (!ignore_duplicates_) {
    accumulate(out, value, r);
  } else {
    // NumPy's x[index] += y: read the whole region, add, write it back (the last write wins).
    Array region_values = Array::empty(out.dtype(), region);
    const auto size = static_cast<std::int64_t>(out.itemsize());
    char* g = static_cast<char*>(region_values.data());
    const char* p = static_cast<const char*>(out.data());
    r.for_each([&](std::int64_t pos, std::int64_t off) {
      std::memcpy(g + pos * size, p + off * size, static_cast<std::size_t>(size));
    });
    increment_into(region_values, value);
    assign(out, region_values, r);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedIncSubtensor::infer_shape(const Apply&,
                                                         const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- builder API ---------------------------------------------------------------------------------

AdvancedItem::AdvancedItem(IndexItem slice) {
  if (!slice.is_slice()) {
    index_ = slice.parts()[0].var();
    return;
  }
  const auto& p = slice.parts();
  entry_ = AdvancedEntry::slice(!p[0].omitted(), !p[1].omitted(), !p[2].omitted());
  parts_ = p;
}

VarList AdvancedItem::inputs() const {
  if (entry_.kind == AdvancedEntry::Kind::Index) return {index_};
  VarList out;
  for (const IndexScalar& s : parts_)
    if (!s.omitted()) out.push_back(s.var());
  return out;
}

namespace {

std::pair<AdvancedIndex, VarList> lower_advanced(const std::vector<AdvancedItem>& index, const char* fn) {
  std::vector<AdvancedEntry> entries;
  VarList inputs;
  for (const AdvancedItem& item : index) {
    entries.push_back(item.entry());
    for (const Var& v : item.inputs()) {
      if (!v) throw UserError(std::string(fn) + ": an index is a null Var");
      inputs.push_back(v);
    }
  }
  return {AdvancedIndex(std::move(entries)), std::move(inputs)};
}

Var build_advanced_inc(const Var& x, const Var& y, const std::vector<AdvancedItem>& index, bool set,
                       bool ignore_duplicates, const char* fn) {
  require_var(x, fn, "the tensor");
  require_var(y, fn, "the value");
  auto [pattern, idx] = lower_advanced(index, fn);
  VarList inputs{x, y};
  inputs.insert(inputs.end(), idx.begin(), idx.end());
  return apply1(std::make_shared<AdvancedIncSubtensor>(std::move(pattern), set, ignore_duplicates), inputs);
}

}  // namespace

Var advanced_subtensor(const Var& x, const std::vector<AdvancedItem>& index) {
  require_var(x, "advanced_subtensor", "the tensor");
  auto [pattern, idx] = lower_advanced(index, "advanced_subtensor");
  VarList inputs{x};
  inputs.insert(inputs.end(), idx.begin(), idx.end());
  return apply1(std::make_shared<AdvancedSubtensor>(std::move(pattern)), inputs);
}

Var advanced_inc_subtensor(const Var& x, const Var& y, const std::vector<AdvancedItem>& index,
                           bool ignore_duplicates) {
  return build_advanced_inc(x, y, index, false, ignore_duplicates, "advanced_inc_subtensor");
}

Var advanced_set_subtensor(const Var& x, const Var& y, const std::vector<AdvancedItem>& index) {
  return build_advanced_inc(x, y, index, true, false, "advanced_set_subtensor");
}

// --- graph-file factories ------------------------------------------------------------------------

namespace {

AdvancedIndex read_advanced_index(PropReader& props, std::size_t num_index_inputs) {
  const Json& list = props.raw("idx_list");
  if (list.is_null()) return AdvancedIndex::all_indices(static_cast<int>(num_index_inputs));
  return AdvancedIndex::from_json(list, props, "idx_list");
}

}  // namespace

OpPtr advanced_subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  AdvancedIndex index = read_advanced_index(props, input_types.empty() ? 0 : input_types.size() - 1);
  props.finish();
  return std::make_shared<AdvancedSubtensor>(std::move(index));
}

OpPtr advanced_inc_subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  AdvancedIndex index = read_advanced_index(props, input_types.size() < 2 ? 0 : input_types.size() - 2);
  bool set = props.get_bool("set_instead_of_inc", false);
  bool ignore_duplicates = props.get_bool("ignore_duplicates", false);
  props.finish();
  return std::make_shared<AdvancedIncSubtensor>(std::move(index), set, ignore_duplicates);
}

// --- gradients -----------------------------------------------------------------------------------

std::vector<GradTerm> AdvancedSubtensor::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return terms;
  // Repeated positions accumulate, as they should for a gradient.
  VarList args{zeros_like(x, x->dtype()), cast(output_grads[0], x->dtype())};
  for (const Var& v : inputs_from(node, 1)) args.push_back(v);
  terms[0] = GradTerm::of(apply1(std::make_shared<AdvancedIncSubtensor>(index_, false, false), args));
  return terms;
}

std::vector<GradTerm> AdvancedSubtensor::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

namespace {

/// Which elements of the region x[index] reach the output of a write that keeps only the last
/// of repeated positions (a set, or NumPy's x[index] += y): each region element writes its
/// own position number into an array shaped like x, and reads back whether its number stayed.
Var last_writes(const AdvancedIndex& index, const Var& x, const Var& region, const VarList& idx) {
  std::vector<IntArg> lengths;
  Var count = int64_constant(1);
  for (const Var& len : lengths_of(region)) {
    lengths.emplace_back(len);
    count = count * len;
  }
  Var positions = reshape(arange(count, DType::Int64), IntList(lengths));
  std::vector<IntArg> x_lengths;
  for (const Var& len : lengths_of(x)) x_lengths.emplace_back(len);
  Var canvas = alloc(int64_constant(-1), IntList(x_lengths));
  VarList set_args{canvas, positions};
  set_args.insert(set_args.end(), idx.begin(), idx.end());
  Var written = apply1(std::make_shared<AdvancedIncSubtensor>(index, true, false), set_args);
  VarList get_args{written};
  get_args.insert(get_args.end(), idx.begin(), idx.end());
  return eq(apply1(std::make_shared<AdvancedSubtensor>(index), get_args), positions);
}

}  // namespace

std::vector<GradTerm> AdvancedIncSubtensor::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& g = output_grads[0];
  const VarList idx = inputs_from(node, 2);
  if (is_float(x->dtype())) {
    Var gx = g;
    if (set_) {  // the overwritten positions do not reach the output
      VarList args{g, const_like(g, 0)};
      args.insert(args.end(), idx.begin(), idx.end());
      gx = apply1(std::make_shared<AdvancedIncSubtensor>(index_, true, false), args);
    }
    terms[0] = GradTerm::of(cast_grad(gx, x->dtype()));
  }
  if (is_float(y->dtype())) {
    VarList args{g};
    args.insert(args.end(), idx.begin(), idx.end());
    Var region = apply1(std::make_shared<AdvancedSubtensor>(index_), args);
    // Of repeated positions only the last write counts for a set or NumPy's +=.
    if (set_ || ignore_duplicates_) region = switch_(last_writes(index_, x, region, idx), region, 0);
    terms[1] = GradTerm::of(cast_grad(sum_to_value(region, y), y->dtype()));
  }
  return terms;
}

std::vector<GradTerm> AdvancedIncSubtensor::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

}  // namespace kiln
