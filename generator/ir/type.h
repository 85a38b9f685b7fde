// The type of a variable: a tensor (dtype + static shape), or one of the non-tensor kinds of
// graph format v2 — an rng (a NumPy Generator's PCG64 state) or none (PyTensor's NoneConst).
//
// Every kind is carried at run time as a tensor (its "carrier"), so the evaluator, memory
// planning and code generation move an rng or a none like any tensor; what must know the
// difference — printing, saving, type checks (make_node refuses non-tensors where an op does
// not take them), the ABI metadata — looks at `kind`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/array.hpp"
#include "kiln/runtime/dtype.hpp"

namespace kiln {

/// A shape entry that is known only at run time (`null` in graph files, `?` when printed).
constexpr std::int64_t kUnknownLength = -1;

/// What a variable holds (graph files: `{"dtype": ..., "shape": ...}` for tensors,
/// `{"kind": "rng", ...}` and `{"kind": "none"}` for the others).
enum class TypeKind : std::uint8_t {
  Tensor,  ///< a tensor of `dtype` and `shape`
  Rng,     ///< a NumPy Generator over PCG64; carried as uint64[kRngStateWords]
  None,    ///< PyTensor's NoneConst (an RV's size, an unchecked length); carries nothing: bool[0]
};

/// The words of an rng's carrier: {state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger}
/// (kiln.h; NumPy's `bit_generator.state` with the 128-bit numbers split into halves).
constexpr std::int64_t kRngStateWords = 6;

/// The kind's name in graph files and messages: "tensor", "rng", "none".
std::string_view type_kind_name(TypeKind kind);

/// dtype + static shape, plus the kind. shape.size() is the rank; an entry is a length >= 0 or
/// kUnknownLength. For the non-tensor kinds dtype and shape describe the run-time carrier and
/// are fixed (rng_type(), none_type() make them).
struct TensorType {
  TypeKind kind = TypeKind::Tensor;
  DType dtype = DType::Float64;
  Shape shape;

  TensorType() = default;
  TensorType(DType dt, Shape sh) : dtype(dt), shape(std::move(sh)) {}

  bool is_tensor() const { return kind == TypeKind::Tensor; }
  int ndim() const { return static_cast<int>(shape.size()); }
  /// True when dimension `i` has static length 1 (PyTensor's "broadcastable").
  bool broadcastable(int i) const { return shape[static_cast<std::size_t>(i)] == 1; }
  bool fully_static() const;

  bool operator==(const TensorType& o) const {
    return kind == o.kind && dtype == o.dtype && shape == o.shape;
  }
  bool operator!=(const TensorType& o) const { return !(*this == o); }

  /// Same kind, dtype and rank, and no two static lengths differ.
  bool compatible_with(const TensorType& o) const;
  /// Every static length of `o` is also static (and equal) here: this is at least as specific.
  bool at_least_as_specific_as(const TensorType& o) const;
  /// The more specific of two compatible types (static lengths from either).
  TensorType merged_with(const TensorType& o) const;
  /// True when `a` (a run-time value) has this dtype and matches the static shape.
  bool accepts(const Array& a) const;

  /// PyTensor's spelling: "Vector(float64, shape=(?,))", "Scalar(int64, shape=())",
  /// "RandomGeneratorType", "NoneTypeT".
  std::string str() const;
  /// Just the shape: "(?, 3)".
  std::string shape_str() const;
};

/// A 0-d type.
inline TensorType scalar_type(DType dt) { return TensorType(dt, {}); }
/// The rng type (PyTensor's RandomGeneratorType over PCG64).
TensorType rng_type();
/// The none type (PyTensor's NoneTypeT).
TensorType none_type();


}  // namespace kiln
