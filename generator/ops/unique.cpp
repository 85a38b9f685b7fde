#include "ops/unique.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/sort.h"

namespace kiln {

// --- Nonzero -------------------------------------------------------------------------------------

std::vector<TensorType> Nonzero::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  if (inputs[0]->ndim() == 0) type_error(*this, "Nonzero only supports non-scalar arrays");
  return std::vector<TensorType>(static_cast<std::size_t>(inputs[0]->ndim()), TensorType(DType::Int64, {kUnknownLength}));
}

void Nonzero::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const Array& a = inputs[0];
  std::vector<std::vector<std::int64_t>> coords(static_cast<std::size_t>(a.ndim()));
  a.for_each_index([&](const std::int64_t* at) {
    if (element_as_double(a, at) == 0) return;  // NaN is nonzero, as in NumPy
    for (int d = 0; d < a.ndim(); ++d) coords[static_cast<std::size_t>(d)].push_back(at[d]);
  });
  for (std::size_t d = 0; d < coords.size(); ++d) {
    Array out = Array::empty(DType::Int64, {static_cast<std::int64_t>(coords[d].size())});
    std::copy(coords[d].begin(), coords[d].end(), out.data<std::int64_t>());
    outputs[d] = out;
  }
}

std::vector<ShapeVars> Nonzero::infer_shape(const Apply& node, const std::vector<ShapeVars>&) const {
  const Var& a = node.input(0);
  Var count = sum(is_bool(a->dtype()) ? a : neq(a, 0));
  return std::vector<ShapeVars>(static_cast<std::size_t>(node.num_outputs()), ShapeVars{count});
}

std::vector<GradTerm> Nonzero::pullback(const Apply&, const VarList&) const {
  return {GradTerm::undefined("Nonzero is not differentiable (its outputs are indices)")};
}

// --- Unique --------------------------------------------------------------------------------------

Json Unique::props() const {
  return Json{{"return_index", index_},
              {"return_inverse", inverse_},
              {"return_counts", counts_},
              {"axis", axis_ ? Json(*axis_) : Json(nullptr)}};
}

std::vector<TensorType> Unique::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[0]->type();
  std::vector<TensorType> out;
  if (!axis_) {
    out.emplace_back(x.dtype, Shape{kUnknownLength});
  } else {
    if (*axis_ < 0 || *axis_ >= x.ndim())
      type_error(*this, "axis " + std::to_string(*axis_) + " is out of range for a tensor of rank " +
                            std::to_string(x.ndim()));
    Shape shape = x.shape;
    shape[static_cast<std::size_t>(*axis_)] = kUnknownLength;
    out.emplace_back(x.dtype, shape);
  }
  const int extra = int(index_) + int(inverse_) + int(counts_);
  for (int k = 0; k < extra; ++k) out.emplace_back(DType::Int64, Shape{kUnknownLength});
  return out;
}

namespace {

/// Row-major rows of a (rows, width) table, compared lexicographically in NumPy's order.
struct Rows {
  Array table;  ///< C-contiguous (rows, width)
  std::int64_t width;

  template <typename T>
  bool less(std::int64_t i, std::int64_t j) const {
    const T* p = table.data<T>();
    for (std::int64_t k = 0; k < width; ++k) {
      const T a = p[i * width + k], b = p[j * width + k];
      if (sorts_before(a, b)) return true;
      if (sorts_before(b, a)) return false;
    }
    return false;
  }
};

}  // namespace

void Unique::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  // The slices to compare as rows of a table: the elements (axis null), or the slices along
  // the axis moved to the front and flattened.
  const int axis = axis_ ? static_cast<int>(*axis_) : 0;
  Shape moved_shape;
  Rows rows;
  if (!axis_) {
    rows.table = x.contiguous().view({x.size(), 1}, {1, 1});
    rows.width = 1;
  } else {
    Shape shape{x.shape(axis)}, strides{x.strides()[static_cast<std::size_t>(axis)]};
    for (int d = 0; d < x.ndim(); ++d)
      if (d != axis) {
        shape.push_back(x.shape(d));
        strides.push_back(x.strides()[static_cast<std::size_t>(d)]);
      }
    moved_shape = shape;
    Array moved = x.view(shape, strides).copy();
    rows.width = moved.shape(0) == 0 ? 0 : moved.size() / moved.shape(0);
    rows.table = moved.view({moved.shape(0), rows.width}, {rows.width, 1});
  }
  const std::int64_t n = rows.table.shape(0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::vector<std::int64_t> group_start, inverse(static_cast<std::size_t>(n));
  visit_real_dtype(x.dtype(), [&](auto t) {
    using T = decltype(t);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) { return rows.less<T>(i, j); });
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = order[static_cast<std::size_t>(k)];
      if (k == 0 || rows.less<T>(order[static_cast<std::size_t>(k - 1)], i)) group_start.push_back(k);
      inverse[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(group_start.size()) - 1;
    }
  });
  const auto groups = static_cast<std::int64_t>(group_start.size());
  // The unique rows, in the layout of x.
  Shape table_shape{groups, rows.width};
  Array picked = Array::empty(x.dtype(), table_shape);
  const auto size = static_cast<std::int64_t>(x.itemsize());
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t src = order[static_cast<std::size_t>(group_start[static_cast<std::size_t>(g)])];
    std::memcpy(static_cast<char*>(picked.data()) + g * rows.width * size,
                static_cast<const char*>(rows.table.data()) + src * rows.width * size,
                static_cast<std::size_t>(rows.width * size));
  }
  std::size_t o = 0;
  if (!axis_) {
    outputs[o++] = picked.view({groups}, {1});
  } else {
    Shape shape = moved_shape;
    shape[0] = groups;
    Array moved = picked.view(shape, c_strides(shape));
    // Move the axis back into place.
    Shape back_shape(shape.size()), back_strides(shape.size());
    const Shape& ms = moved.strides();
    back_shape[static_cast<std::size_t>(axis)] = shape[0];
    back_strides[static_cast<std::size_t>(axis)] = ms[0];
    for (int d = 0, k = 1; d < x.ndim(); ++d)
      if (d != axis) {
        back_shape[static_cast<std::size_t>(d)] = shape[static_cast<std::size_t>(k)];
        back_strides[static_cast<std::size_t>(d)] = ms[static_cast<std::size_t>(k)];
        ++k;
      }
    outputs[o++] = moved.view(back_shape, back_strides).copy();
  }
  auto vector_of = [](const std::vector<std::int64_t>& v) {
    Array a = Array::empty(DType::Int64, {static_cast<std::int64_t>(v.size())});
    std::copy(v.begin(), v.end(), a.data<std::int64_t>());
    return a;
  };
  if (index_) {
    std::vector<std::int64_t> first;
    for (std::int64_t s : group_start) first.push_back(order[static_cast<std::size_t>(s)]);
    outputs[o++] = vector_of(first);
  }
  if (inverse_) outputs[o++] = vector_of(inverse);
  if (counts_) {
    std::vector<std::int64_t> counts;
    for (std::int64_t g = 0; g < groups; ++g)
      counts.push_back((g + 1 < groups ? group_start[static_cast<std::size_t>(g + 1)] : n) -
                       group_start[static_cast<std::size_t>(g)]);
    outputs[o++] = vector_of(counts);
  }
}

std::vector<ShapeVars> Unique::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& xs = input_shapes[0];
  std::vector<ShapeVars> out;
  for (int k = 0; k < node.num_outputs(); ++k) out.push_back({shape_i(node.output(k), 0)});
  if (axis_) {
    ShapeVars first = xs;
    first[static_cast<std::size_t>(*axis_)] = shape_i(node.output(0), static_cast<int>(*axis_));
    out[0] = first;
  }
  if (inverse_) {
    Var n = int64_constant(1);
    if (axis_) {
      n = xs[static_cast<std::size_t>(*axis_)];
    } else {
      for (const Var& l : xs) n = n * l;
    }
    out[index_ ? 2 : 1] = {n};
  }
  return out;
}

// --- builder API and factories -------------------------------------------------------------------

VarList nonzero(const Var& a) {
  if (!a) throw UserError("nonzero: the tensor is a null Var");
  return make_node(std::make_shared<Nonzero>(), {a})->outputs();
}

VarList unique(const Var& x, bool return_index, bool return_inverse, bool return_counts,
               std::optional<std::int64_t> axis) {
  if (!x) throw UserError("unique: the tensor is a null Var");
  return make_node(std::make_shared<Unique>(return_index, return_inverse, return_counts, axis), {x})->outputs();
}

OpPtr nonzero_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Nonzero>();
}

OpPtr unique_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool index = props.get_bool("return_index", false);
  const bool inverse = props.get_bool("return_inverse", false);
  const bool counts = props.get_bool("return_counts", false);
  std::optional<std::int64_t> axis;
  if (!props.raw("axis").is_null()) {
    axis = props.get_int("axis");
    if (*axis < 0) props.fail("axis", "cannot be negative (PyTensor normalises it when building the op)");
  }
  props.finish();
  return std::make_shared<Unique>(index, inverse, counts, axis);
}

}  // namespace kiln
