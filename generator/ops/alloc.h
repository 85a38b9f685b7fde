// Ops that build tensors from lengths and scalars: Alloc (broadcast a value to a shape),
// AllocEmpty (a buffer of a shape; zero-filled here for determinism), MakeVector (scalars into
// a vector), ARange, Eye and Tri. Also the small helpers that the shape-building ops share:
// reading constant integers out of a graph, and IntArg/IntList, the "Var or plain integer"
// arguments of the builder API.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

// ---------------------------------------------------------------------------------------------
// Builder arguments and constant helpers

/// An integer argument of the builder API: a 0-d integer Var, or a plain integer that becomes
/// a 0-d int64 constant.
class IntArg {
 public:
  IntArg(const Var& v) : var_(v) {}  // NOLINT: implicit on purpose
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IntArg(T v) : value_(static_cast<std::int64_t>(v)) {}  // NOLINT: implicit on purpose

  /// The Var (an int64 constant for a plain integer).
  Var var() const;
  /// The plain integer, when this argument is one.
  const std::optional<std::int64_t>& literal() const { return value_; }

 private:
  Var var_;
  std::optional<std::int64_t> value_;
};

/// A number argument of the builder API: a 0-d Var, or a C++ number that becomes a constant
/// with PyTensor's literal autocasting (the smallest int8..int64 holding an integer; float32
/// for a float exactly representable in it, else float64).
class NumArg {
 public:
  NumArg(const Var& v) : var_(v) {}  // NOLINT: implicit on purpose
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  NumArg(T v) : var_(int_literal(static_cast<std::int64_t>(v))) {}  // NOLINT
  NumArg(double v) : var_(float_literal(v)) {}                      // NOLINT
  const Var& var() const { return var_; }

 private:
  static Var int_literal(std::int64_t v);
  static Var float_literal(double v);
  Var var_;
};

/// A list of integers for the builder API: `{2, n, -1}` (plain integers and 0-d Vars), a
/// std::vector, or one 1-d integer Var.
class IntList {
 public:
  IntList() = default;
  IntList(std::initializer_list<IntArg> items) : items_(items) {}   // NOLINT
  IntList(std::vector<IntArg> items) : items_(std::move(items)) {}  // NOLINT
  IntList(const std::vector<std::int64_t>& values);                 // NOLINT
  IntList(const Var& vector) : vector_(vector) {}                   // NOLINT

  /// The 1-d Var, when the list was given as one.
  const Var& vector() const { return vector_; }
  /// The entries one by one. A 1-d Var is unpacked when it is a constant or a MakeVector;
  /// otherwise a UserError naming `who`.
  std::vector<IntArg> items(const std::string& who) const;
  /// All entries as plain integers, when every one is (literal or constant).
  std::optional<std::vector<std::int64_t>> literals() const;
  /// The list as one 1-d Var: the given Var, an int64 vector constant, or a MakeVector{int64}.
  Var as_vector() const;

 private:
  std::vector<IntArg> items_;
  Var vector_;
};

/// The message of Alloc's run-time broadcasting failure (PyTensor's words), for the evaluator and
/// generated code alike.
extern const char* const kAllocRuntimeBroadcast;

/// The value of a 0-d integer (or bool) constant; nullopt for anything else.
std::optional<std::int64_t> constant_int(const Var& v);
/// The entries of a 1-d integer vector known at graph-build time entry by entry: a constant,
/// or a MakeVector (entries that are not constants are nullopt). nullopt when neither.
std::optional<std::vector<std::optional<std::int64_t>>> constant_entries(const Var& v);
/// `v` as int64 (a cast node when it has another dtype): for infer_shape results.
Var to_int64(const Var& v);
/// Checks that `v` is a 0-d integer (not bool) length argument and returns its static length
/// (kUnknownLength unless a constant). A negative constant is refused.
std::int64_t check_length_input(const Op& op, const Var& v, const std::string& what);
/// Reads a run-time length (0-d integer); RuntimeFailure when it is negative.
std::int64_t read_length(const Array& a, const std::string& what);

// ---------------------------------------------------------------------------------------------
// Ops

/// Alloc(value, *lengths): `value` broadcast to the shape given by 0-d integer lengths. Only
/// value dimensions of static length 1 broadcast (PyTensor refuses run-time broadcasting).
class Alloc : public Op {
 public:
  std::string_view name() const override { return "Alloc"; }
  bool accepts_complex() const override { return true; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  /// Never folded: a constant Alloc would bake a possibly large buffer into the library
  /// (PyTensor folds it only in rare cases; its rewrites lift Allocs instead).
  bool do_constant_folding(const Apply&) const override { return false; }
};

/// AllocEmpty{dtype}(*lengths): a buffer of that shape. PyTensor leaves it uninitialised; kiln's
/// reference implementation fills it with zeros so results are deterministic.
class AllocEmpty : public Op {
 public:
  explicit AllocEmpty(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  std::string_view name() const override { return "AllocEmpty"; }
  Json props() const override { return Json{{"dtype", std::string(dtype_name(dtype_))}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  bool do_constant_folding(const Apply&) const override { return false; }

 private:
  DType dtype_;
};

/// MakeVector{dtype}(*scalars): 0-d inputs into a vector of `dtype`. Inputs of another dtype
/// are converted, but only when that is an upcast (upcast(dtype, input) == dtype).
class MakeVector : public Op {
 public:
  explicit MakeVector(DType dtype = DType::Int64) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  std::string_view name() const override { return "MakeVector"; }
  Json props() const override { return Json{{"dtype", std::string(dtype_name(dtype_))}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  DType dtype_;
};

/// ARange{dtype}(start, stop, step): np.arange(start, stop, step, dtype). A zero step is a
/// run-time error.
class ARange : public Op {
 public:
  explicit ARange(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  std::string_view name() const override { return "ARange"; }
  Json props() const override { return Json{{"dtype", std::string(dtype_name(dtype_))}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  DType dtype_;
};

/// Eye{dtype}(n, m, k) = np.eye(n, m, k) and Tri{dtype}(N, M, k) = np.tri(N, M, k): an n x m
/// matrix of ones on (Eye) or at and below (Tri) the k-th diagonal, zeros elsewhere.
class EyeLike : public Op {
 public:
  enum class Kind { Eye, Tri };
  EyeLike(Kind kind, DType dtype) : kind_(kind), dtype_(dtype) {}
  Kind kind() const { return kind_; }
  DType dtype() const { return dtype_; }
  std::string_view name() const override { return kind_ == Kind::Eye ? "Eye" : "Tri"; }
  Json props() const override { return Json{{"dtype", std::string(dtype_name(dtype_))}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  /// Ones and zeros of any dtype: complex 1+0j too (np.eye(3, dtype=complex64)).
  bool accepts_complex() const override { return true; }

 private:
  Kind kind_;
  DType dtype_;
};

// ---------------------------------------------------------------------------------------------
// Builder API

/// `value` broadcast to `lengths` (np.broadcast_to + copy); the dtype is value's.
Var alloc(const Var& value, const IntList& lengths);
/// A zero-filled buffer (AllocEmpty) of the given dtype and lengths.
Var alloc_empty(DType dtype, const IntList& lengths);
/// 0-d Vars into a vector; `dtype` defaults to the upcast of the inputs (int64 when empty).
Var make_vector(const VarList& scalars, std::optional<DType> dtype = std::nullopt);
/// np.arange(start, stop, step); `dtype` defaults to PyTensor's rule: the upcast of the
/// inputs, any signed integer -> int64, any unsigned -> uint64.
Var arange(const NumArg& start, const NumArg& stop, const NumArg& step = 1,
           std::optional<DType> dtype = std::nullopt);
/// np.arange(0, stop, 1).
Var arange(const NumArg& stop, std::optional<DType> dtype = std::nullopt);
/// np.eye(n, m (default n), k, dtype).
Var eye(const IntArg& n, std::optional<IntArg> m = std::nullopt, const IntArg& k = 0,
        DType dtype = DType::Float64);
/// np.tri(N, M (default N), k, dtype).
Var tri(const IntArg& N, std::optional<IntArg> M = std::nullopt, const IntArg& k = 0,
        DType dtype = DType::Float64);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr alloc_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr alloc_empty_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr make_vector_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr arange_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr eye_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr tri_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
