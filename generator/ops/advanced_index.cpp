#include "ops/advanced_index.h"

#include <functional>
#include <limits>
#include <optional>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/reduce.h"
#include "ops/subtensor.h"

namespace kiln {

// --- the idx_list --------------------------------------------------------------------------------

int AdvancedEntry::num_inputs() const {
  switch (kind) {
    case Kind::Index: return 1;
    case Kind::Slice: return int(has_start) + int(has_stop) + int(has_step);
    case Kind::NewAxis: return 0;
  }
  return 0;
}

AdvancedIndex AdvancedIndex::all_indices(int n) {
  return AdvancedIndex(std::vector<AdvancedEntry>(static_cast<std::size_t>(n), AdvancedEntry::index()));
}

int AdvancedIndex::num_inputs() const {
  int n = 0;
  for (const auto& e : entries_) n += e.num_inputs();
  return n;
}

Json AdvancedIndex::to_json() const {
  Json list = Json::array();
  auto part = [](bool present) { return present ? Json("input") : Json(nullptr); };
  for (const auto& e : entries_) {
    switch (e.kind) {
      case AdvancedEntry::Kind::Index: list.push_back(Json{{"index", "input"}}); break;
      case AdvancedEntry::Kind::Slice:
        list.push_back(Json{{"slice", Json::array({part(e.has_start), part(e.has_stop), part(e.has_step)})}});
        break;
      case AdvancedEntry::Kind::NewAxis: list.push_back(Json{{"newaxis", true}}); break;
    }
  }
  return list;
}

AdvancedIndex AdvancedIndex::from_json(const Json& j, const PropReader& props, const std::string& key) {
  if (!j.is_array()) props.fail(key, "must be a list of index entries, not " + j.dump());
  const std::string what = props.op_name() +
                           ": an idx_list entry is {\"index\": \"input\"}, {\"newaxis\": true} or "
                           "{\"slice\": [start, stop, step]} with each part null or \"input\"";
  std::vector<AdvancedEntry> entries;
  for (std::size_t k = 0; k < j.size(); ++k) {
    const Json& e = j[k];
    const std::string at = props.where(key) + "/" + std::to_string(k);
    if (!e.is_object() || e.size() != 1) throw UserError(what + ", not " + e.dump(), at);
    if (e.contains("index")) {
      if (e["index"] != "input") throw UserError(what + ", not " + e.dump(), at + "/index");
      entries.push_back(AdvancedEntry::index());
    } else if (e.contains("newaxis")) {
      if (e["newaxis"] != true) throw UserError(what + ", not " + e.dump(), at + "/newaxis");
      entries.push_back(AdvancedEntry::newaxis());
    } else if (e.contains("slice")) {
      const std::array<bool, 3> present = read_slice_entry(e, what, at);
      entries.push_back(AdvancedEntry::slice(present[0], present[1], present[2]));
    } else {
      throw UserError(what + ", not " + e.dump(), at);
    }
  }
  return AdvancedIndex(std::move(entries));
}

// --- layout --------------------------------------------------------------------------------------

int AdvancedLayout::take_axis() const {
  if (advanced.size() != 1) return -1;
  const Part& a = parts[static_cast<std::size_t>(advanced[0])];
  if (a.kind != Part::Kind::Array) return -1;
  for (int b : basic)
    if (!parts[static_cast<std::size_t>(b)].full_slice()) return -1;
  return a.x_dim;
}

bool AdvancedLayout::has_mask() const {
  for (int a : advanced)
    if (parts[static_cast<std::size_t>(a)].kind == Part::Kind::Mask) return true;
  return false;
}

AdvancedLayout advanced_layout(const Op& who, const AdvancedIndex& index, const TensorType& x,
                               const VarList& index_inputs) {
  if (static_cast<int>(index_inputs.size()) != index.num_inputs())
    type_error(who, "its idx_list takes " + std::to_string(index.num_inputs()) + " index input(s), got " +
                        std::to_string(index_inputs.size()));
  using Part = AdvancedLayout::Part;
  AdvancedLayout layout;
  layout.x_ndim = x.ndim();
  int next_input = 0, x_dim = 0;
  for (const AdvancedEntry& e : index.entries()) {
    Part part;
    if (e.kind == AdvancedEntry::Kind::NewAxis) {
      part.kind = Part::Kind::NewAxis;
    } else if (e.kind == AdvancedEntry::Kind::Slice) {
      part.kind = Part::Kind::Slice;
      part.x_dim = x_dim++;
      const bool present[3] = {e.has_start, e.has_stop, e.has_step};
      for (std::size_t p = 0; p < 3; ++p) {
        if (!present[p]) continue;
        const Var& v = index_inputs[static_cast<std::size_t>(next_input)];
        if (v->ndim() != 0 || !is_integer(v->dtype()))
          type_error(who, "slice input " + std::to_string(next_input) + " (" + v->label() +
                              ") must be a 0-d integer, got " + v->type().str());
        part.slice_inputs[p] = next_input++;
      }
    } else {
      const Var& v = index_inputs[static_cast<std::size_t>(next_input)];
      part.input = next_input++;
      part.ndim = v->ndim();
      part.x_dim = x_dim;
      if (is_bool(v->dtype())) {
        if (v->ndim() == 0)
          type_error(who, "index input " + std::to_string(part.input) + " (" + v->label() +
                              ") is a 0-d boolean: indexing with a scalar boolean is not supported");
        part.kind = Part::Kind::Mask;
        x_dim += v->ndim();
      } else if (is_integer(v->dtype())) {
        part.kind = Part::Kind::Array;
        x_dim += 1;
      } else {
        type_error(who, "index input " + std::to_string(part.input) + " (" + v->label() +
                            ") must be an integer or boolean tensor, got " + v->type().str());
      }
    }
    if (x_dim > x.ndim())
      type_error(who, "too many indices for a tensor of rank " + std::to_string(x.ndim()));
    layout.parts.push_back(part);
  }
  for (; x_dim < x.ndim(); ++x_dim) {
    Part part;
    part.x_dim = x_dim;
    layout.parts.push_back(part);
  }
  // Static mask lengths must match the dimensions they index (NumPy's IndexError).
  for (const Part& p : layout.parts) {
    if (p.kind != Part::Kind::Mask) continue;
    const Var& m = index_inputs[static_cast<std::size_t>(p.input)];
    for (int j = 0; j < p.ndim; ++j) {
      const std::int64_t lm = m->shape()[static_cast<std::size_t>(j)];
      const std::int64_t lx = x.shape[static_cast<std::size_t>(p.x_dim + j)];
      if (lm != kUnknownLength && lx != kUnknownLength && lm != lx)
        type_error(who, "boolean index did not match indexed tensor along dimension " + std::to_string(p.x_dim + j) +
                            "; dimension is " + std::to_string(lx) + " but corresponding boolean dimension is " +
                            std::to_string(lm));
    }
  }
  // The block goes where the first advanced part was when the advanced parts are adjacent
  // (nothing between them), and first otherwise.
  int first = -1, last = -1, basic_before = 0;
  for (std::size_t k = 0; k < layout.parts.size(); ++k) {
    if (layout.parts[k].advanced()) {
      if (first < 0) first = static_cast<int>(k);
      last = static_cast<int>(k);
      layout.advanced.push_back(static_cast<int>(k));
      layout.block_ndim = std::max(layout.block_ndim, layout.parts[k].kind == Part::Kind::Mask ? 1 : layout.parts[k].ndim);
    } else {
      layout.basic.push_back(static_cast<int>(k));
      if (first < 0) ++basic_before;
    }
  }
  const bool adjacent = first < 0 || last - first + 1 == static_cast<int>(layout.advanced.size());
  layout.block_pos = adjacent ? basic_before : 0;
  return layout;
}

namespace {

using Part = AdvancedLayout::Part;

/// The shape each advanced part contributes to the block: an array its own, a mask (count,).
template <typename Len>
std::vector<std::vector<Len>> block_operand_shapes(const AdvancedLayout& layout,
                                                   const std::function<std::vector<Len>(const Part&)>& of) {
  std::vector<std::vector<Len>> shapes;
  for (int a : layout.advanced) shapes.push_back(of(layout.parts[static_cast<std::size_t>(a)]));
  return shapes;
}

/// "(2,) (3, 1)": shapes as NumPy lists them in its broadcasting errors.
std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& sh : shapes) s += (s.empty() ? "" : " ") + shape_str(sh);
  return s;
}

}  // namespace

Shape advanced_static_shape(const Op& who, const AdvancedLayout& layout, const TensorType& x,
                            const VarList& index_inputs) {
  // The block: static lengths of the index arrays broadcast (PyTensor's Elemwise rule).
  auto operands = block_operand_shapes<std::int64_t>(layout, [&](const Part& p) -> Shape {
    const Var& v = index_inputs[static_cast<std::size_t>(p.input)];
    if (p.kind == Part::Kind::Array) return v->shape();
    if (v->is_constant()) {
      Array m = v->value();
      std::int64_t n = 0;
      for (std::int64_t i = 0; i < m.size(); ++i) n += m.data<bool>()[i] ? 1 : 0;
      return {n};
    }
    return {kUnknownLength};
  });
  Shape block(static_cast<std::size_t>(layout.block_ndim), kUnknownLength);
  for (int d = 0; d < layout.block_ndim; ++d) {
    std::vector<std::int64_t> lengths;
    for (const Shape& s : operands) {
      const int off = layout.block_ndim - static_cast<int>(s.size());
      if (d >= off) lengths.push_back(s[static_cast<std::size_t>(d - off)]);
    }
    std::optional<std::int64_t> known;
    bool unknown = false, all_one = true;
    for (std::int64_t l : lengths) {
      if (l == kUnknownLength) {
        unknown = true;
        all_one = false;
        continue;
      }
      if (l == 1) continue;
      all_one = false;
      if (known && *known != l) {
        std::vector<Shape> texts = operands;
        for (Shape& t : texts)
          for (auto& v : t) v = v == kUnknownLength ? -1 : v;
        type_error(who, "shape mismatch: indexing arrays could not be broadcast together with shapes " +
                            shapes_text(texts) + " (-1: known at run time)");
      }
      known = l;
    }
    block[static_cast<std::size_t>(d)] = known ? *known : (all_one && !unknown ? 1 : kUnknownLength);
  }
  Shape out;
  auto basic_length = [&](const Part& p) -> std::int64_t {
    if (p.kind == Part::Kind::NewAxis) return 1;
    const std::int64_t n = x.shape[static_cast<std::size_t>(p.x_dim)];
    std::optional<std::int64_t> value[3];
    bool all_constant = true;
    for (std::size_t k = 0; k < 3; ++k) {
      if (p.slice_inputs[k] < 0) continue;
      value[k] = constant_int(index_inputs[static_cast<std::size_t>(p.slice_inputs[k])]);
      all_constant = all_constant && value[k].has_value();
    }
    if (value[2] && *value[2] == 0) type_error(who, "slice step cannot be zero");
    if (n == kUnknownLength || !all_constant) return kUnknownLength;
    return resolve_slice(value[0], value[1], value[2], n).count;
  };
  for (std::size_t b = 0; b <= layout.basic.size(); ++b) {
    if (static_cast<int>(b) == layout.block_pos) out.insert(out.end(), block.begin(), block.end());
    if (b < layout.basic.size()) out.push_back(basic_length(layout.parts[static_cast<std::size_t>(layout.basic[b])]));
  }
  return out;
}

ShapeVars advanced_symbolic_shape(const AdvancedLayout& layout, const ShapeVars& x_shape, const VarList& index_inputs,
                                  const std::vector<ShapeVars>& index_shapes) {
  auto operands = block_operand_shapes<Var>(layout, [&](const Part& p) -> ShapeVars {
    if (p.kind == Part::Kind::Array) return index_shapes[static_cast<std::size_t>(p.input)];
    return {sum(index_inputs[static_cast<std::size_t>(p.input)])};  // the number of true elements
  });
  ShapeVars block;
  for (int d = 0; d < layout.block_ndim; ++d) {
    Var len;
    for (const ShapeVars& s : operands) {
      const int off = layout.block_ndim - static_cast<int>(s.size());
      if (d < off) continue;
      Var l = to_int64(s[static_cast<std::size_t>(d - off)]);
      auto c = constant_int(l);
      if (c && *c != 1) {  // a static length other than 1 is the block's (or an error)
        len = l;
        break;
      }
      // Broadcasting of lengths that may be 1: the other one wins over a 1.
      len = len ? switch_(eq(len, 1), l, len) : l;
    }
    block.push_back(len ? len : int64_constant(1));
  }
  ShapeVars out;
  for (std::size_t b = 0; b <= layout.basic.size(); ++b) {
    if (static_cast<int>(b) == layout.block_pos) out.insert(out.end(), block.begin(), block.end());
    if (b == layout.basic.size()) break;
    const Part& p = layout.parts[static_cast<std::size_t>(layout.basic[b])];
    if (p.kind == Part::Kind::NewAxis) {
      out.push_back(int64_constant(1));
      continue;
    }
    std::array<Var, 3> parts;
    for (std::size_t k = 0; k < 3; ++k)
      if (p.slice_inputs[k] >= 0) parts[k] = index_inputs[static_cast<std::size_t>(p.slice_inputs[k])];
    const Var& n = x_shape[static_cast<std::size_t>(p.x_dim)];
    out.push_back(p.full_slice() ? n : slice_length(n, parts));
  }
  return out;
}

// --- run time ------------------------------------------------------------------------------------

namespace {

/// An integer index array as int64 values (row-major), negative ones counted from the end;
/// out of range is a RuntimeFailure naming the axis of x.
Array checked_indices(const Array& idx, int axis, std::int64_t length) {
  Array out = Array::empty(DType::Int64, idx.shape());
  std::int64_t* q = out.data<std::int64_t>();
  visit_real_dtype(idx.dtype(), [&](auto t) {
    using T = decltype(t);
    idx.for_each_index([&](const std::int64_t* at) {
      const T v = *static_cast<const T*>(idx.element_ptr(at));
      if constexpr (std::is_same_v<T, std::uint64_t>) {
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw RuntimeFailure("index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(axis) +
                               " with size " + std::to_string(length));
      }
      const auto i = static_cast<std::int64_t>(v);
      const std::int64_t j = i < 0 ? i + length : i;
      if (j < 0 || j >= length) index_out_of_bounds(i, axis, length);
      *q++ = j;
    });
  });
  return out;
}

/// The coordinates of the true elements of a mask indexing dimensions x_dim.. of x (one int64
/// vector per dimension, NumPy's nonzero); a shape that differs from x's is an IndexError.
std::vector<Array> mask_coordinates(const Array& mask, const Shape& x_shape, int x_dim) {
  for (int j = 0; j < mask.ndim(); ++j) {
    const std::int64_t lx = x_shape[static_cast<std::size_t>(x_dim + j)];
    if (mask.shape(j) != lx)
      throw RuntimeFailure("boolean index did not match indexed array along dimension " + std::to_string(x_dim + j) +
                           "; dimension is " + std::to_string(lx) + " but corresponding boolean dimension is " +
                           std::to_string(mask.shape(j)));
  }
  std::vector<std::vector<std::int64_t>> coords(static_cast<std::size_t>(mask.ndim()));
  mask.for_each_index([&](const std::int64_t* at) {
    if (!*static_cast<const bool*>(mask.element_ptr(at))) return;
    for (int j = 0; j < mask.ndim(); ++j) coords[static_cast<std::size_t>(j)].push_back(at[j]);
  });
  std::vector<Array> out;
  for (const auto& c : coords) {
    Array a = Array::empty(DType::Int64, {static_cast<std::int64_t>(c.size())});
    std::copy(c.begin(), c.end(), a.data<std::int64_t>());
    out.push_back(a);
  }
  return out;
}

}  // namespace

ResolvedAdvancedIndex::ResolvedAdvancedIndex(const AdvancedLayout& layout, const Array& x,
                                             const std::vector<Array>& index_inputs) {
  // Every advanced dimension of x with its coordinates (before broadcasting).
  struct Coordinates {
    int x_dim;
    Array values;  ///< int64, already checked and normalised
  };
  std::vector<Coordinates> coords;
  std::vector<Shape> operand_shapes;
  for (int a : layout.advanced) {
    const Part& p = layout.parts[static_cast<std::size_t>(a)];
    const Array& idx = index_inputs[static_cast<std::size_t>(p.input)];
    if (p.kind == Part::Kind::Array) {
      coords.push_back({p.x_dim, checked_indices(idx, p.x_dim, x.shape(p.x_dim))});
      operand_shapes.push_back(idx.shape());
    } else {
      std::vector<Array> c = mask_coordinates(idx, x.shape(), p.x_dim);
      operand_shapes.push_back(c.empty() ? Shape{0} : c[0].shape());
      for (std::size_t j = 0; j < c.size(); ++j) coords.push_back({p.x_dim + static_cast<int>(j), c[j]});
    }
  }
  // The block: the index shapes broadcast (NumPy's IndexError when they do not).
  block_shape_ = Shape(static_cast<std::size_t>(layout.block_ndim), 1);
  for (const Shape& s : operand_shapes) {
    const std::size_t off = block_shape_.size() - s.size();
    for (std::size_t d = 0; d < s.size(); ++d) {
      std::int64_t& b = block_shape_[off + d];
      if (s[d] == b || s[d] == 1) continue;
      if (b != 1)
        throw RuntimeFailure("shape mismatch: indexing arrays could not be broadcast together with shapes " +
                             shapes_text(operand_shapes));
      b = s[d];
    }
  }
  // Per block element, the offset of the advanced dimensions.
  Array offsets = Array::zeros(DType::Int64, block_shape_);
  for (const Coordinates& c : coords) {
    // A mask's coordinate vector is aligned with the block's last dimension, like an index array.
    Array b = broadcast_to(c.values, block_shape_);
    const std::int64_t stride = x.strides()[static_cast<std::size_t>(c.x_dim)];
    std::int64_t* q = offsets.data<std::int64_t>();
    b.for_each_index([&](const std::int64_t* at) { *q++ += *static_cast<const std::int64_t*>(b.element_ptr(at)) * stride; });
  }
  block_offsets_.assign(offsets.data<std::int64_t>(), offsets.data<std::int64_t>() + offsets.size());
  if (block_offsets_.empty()) block_offsets_.push_back(0);  // an empty block: never read

  // The region's dimensions: the basic ones in order, the block at block_pos.
  std::vector<Dim> basic;
  for (int bi : layout.basic) {
    const Part& p = layout.parts[static_cast<std::size_t>(bi)];
    if (p.kind == Part::Kind::NewAxis) {
      basic.push_back({1, 0, -1});
      continue;
    }
    std::optional<std::int64_t> part[3];
    for (std::size_t k = 0; k < 3; ++k)
      if (p.slice_inputs[k] >= 0) part[k] = scalar_to_int64(index_inputs[static_cast<std::size_t>(p.slice_inputs[k])]);
    const std::int64_t stride = x.strides()[static_cast<std::size_t>(p.x_dim)];
    SliceRange r = resolve_slice(part[0], part[1], part[2], x.shape(p.x_dim));
    if (r.count > 0) base_ += r.start * stride;
    basic.push_back({r.count, r.step * stride, -1});
  }
  for (std::size_t b = 0; b <= basic.size(); ++b) {
    if (static_cast<int>(b) == layout.block_pos)
      for (int d = 0; d < layout.block_ndim; ++d) dims_.push_back({block_shape_[static_cast<std::size_t>(d)], 0, d});
    if (b < basic.size()) dims_.push_back(basic[b]);
  }
  for (const Dim& d : dims_) shape_.push_back(d.length);
}

}  // namespace kiln
