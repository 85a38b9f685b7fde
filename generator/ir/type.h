// TensorType: a dtype and a static shape whose lengths may be unknown until run time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/array.hpp"
#include "kiln/runtime/dtype.hpp"

namespace kiln {

/// A shape entry that is known only at run time (`null` in graph files, `?` when printed).
constexpr std::int64_t kUnknownLength = -1;

/// dtype + static shape. shape.size() is the rank; an entry is a length >= 0 or kUnknownLength.
struct TensorType {
  DType dtype = DType::Float64;
  Shape shape;

  TensorType() = default;
  TensorType(DType dt, Shape sh) : dtype(dt), shape(std::move(sh)) {}

  int ndim() const { return static_cast<int>(shape.size()); }
  /// True when dimension `i` has static length 1 (PyTensor's "broadcastable").
  bool broadcastable(int i) const { return shape[static_cast<std::size_t>(i)] == 1; }
  bool fully_static() const;

  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }

  /// Same dtype and rank, and no two static lengths differ.
  bool compatible_with(const TensorType& o) const;
  /// Every static length of `o` is also static (and equal) here: this is at least as specific.
  bool at_least_as_specific_as(const TensorType& o) const;
  /// The more specific of two compatible types (static lengths from either).
  TensorType merged_with(const TensorType& o) const;
  /// True when `a` (a run-time value) has this dtype and matches the static shape.
  bool accepts(const Array& a) const;

  /// PyTensor's spelling: "Vector(float64, shape=(?,))", "Scalar(int64, shape=())".
  std::string str() const;
  /// Just the shape: "(?, 3)".
  std::string shape_str() const;
};

/// A 0-d type.
inline TensorType scalar_type(DType dt) { return TensorType(dt, {}); }

}  // namespace kiln
