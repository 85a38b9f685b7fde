// Variables and Apply nodes: the graph itself.
//
// A Variable is an input (no owner, no value), a constant (has a value) or the output of an
// Apply node. Graphs are held by shared_ptr<Variable> (`Var`). An Apply node owns its output
// Variables, and a Var that points at an output shares ownership of the whole Apply (an
// aliasing shared_ptr), so holding any output keeps its node — and through its inputs, the
// graph above it — alive. There are no ownership cycles.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/provenance.h"
#include "ir/type.h"

namespace kiln {

class Apply;
class Op;
class Variable;

/// A handle to a Variable (shared ownership). `==` compares identity, as in PyTensor; the
/// arithmetic and ordering operators of the C++ API (api/) build graph nodes.
class Var {
 public:
  Var() = default;
  Var(std::nullptr_t) {}  // NOLINT: null handle
  explicit Var(std::shared_ptr<Variable> p) : p_(std::move(p)) {}

  Variable* get() const { return p_.get(); }
  Variable* operator->() const { return p_.get(); }
  Variable& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  const std::shared_ptr<Variable>& ptr() const { return p_; }

  friend bool operator==(const Var& a, const Var& b) { return a.p_ == b.p_; }
  friend bool operator!=(const Var& a, const Var& b) { return a.p_ != b.p_; }
  friend bool operator==(const Var& a, std::nullptr_t) { return a.p_ == nullptr; }
  friend bool operator!=(const Var& a, std::nullptr_t) { return a.p_ != nullptr; }

 private:
  std::shared_ptr<Variable> p_;
};

using VarList = std::vector<Var>;
using OpPtr = std::shared_ptr<const Op>;

class Variable {
 public:
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  int ndim() const { return type_.ndim(); }
  const Shape& shape() const { return type_.shape; }

  /// Optional human name (printing, argument names, error messages). May be any string.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// The Apply node computing this variable (null for inputs and constants).
  Apply* owner() const { return owner_; }
  /// Which output of the owner this is.
  int index() const { return index_; }

  bool is_constant() const { return value_ != nullptr; }
  bool is_input() const { return owner_ == nullptr && value_ == nullptr; }
  /// A constant's value (C-contiguous, exactly of this variable's type).
  const Array& value() const { return *value_; }
  const std::shared_ptr<const Array>& value_ptr() const { return value_; }

  /// The id this variable had in the graph file it came from (kept so saving is stable).
  const std::string& file_id() const { return file_id_; }
  void set_file_id(std::string id) { file_id_ = std::move(id); }

  /// Sharpens the static shape (a declared type more specific than inference; see
  /// GRAPH_FORMAT.md). Only ever makes the type more specific.
  void refine_type(const TensorType& t);

  /// Name for messages: `"name" (id)` when both are known.
  std::string label() const;

 private:
  friend class Apply;
  friend Var make_input(TensorType, std::string);
  friend Var make_constant(Array, std::string, TypeKind);
  friend Var make_constant_shared(std::shared_ptr<const Array>, std::string, TypeKind);

  explicit Variable(TensorType t) : type_(std::move(t)) {}

  TensorType type_;
  std::string name_;
  std::string file_id_;
  Apply* owner_ = nullptr;
  int index_ = 0;
  std::shared_ptr<const Array> value_;
};

/// A new graph input.
Var make_input(TensorType type, std::string name = {});
/// A new constant; its type has the value's dtype and exact shape. The value is copied to a
/// C-contiguous private buffer (constants are immutable). For the non-tensor kinds `value` is
/// the carrier (rng: uint64[6] words; none: bool[0]) and must match it (InternalError if not).
Var make_constant(Array value, std::string name = {}, TypeKind kind = TypeKind::Tensor);
/// A new constant Variable sharing an existing (immutable, C-contiguous) value.
Var make_constant_shared(std::shared_ptr<const Array> value, std::string name = {},
                         TypeKind kind = TypeKind::Tensor);
/// PyTensor's NoneConst: a new constant of the none type.
Var none_constant();

class Apply : public std::enable_shared_from_this<Apply> {
 public:
  /// Creates a node without type inference. Use make_node() (ir/op.h), which validates.
  static std::shared_ptr<Apply> create(OpPtr op, VarList inputs,
                                       const std::vector<TensorType>& output_types);

  const Op& op() const { return *op_; }
  const OpPtr& op_ptr() const { return op_; }

  const VarList& inputs() const { return inputs_; }
  const Var& input(int i) const { return inputs_.at(static_cast<std::size_t>(i)); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  /// Output i as a Var sharing ownership of this node.
  Var output(int i) const;
  VarList outputs() const;
  Variable* output_ptr(int i) const { return outputs_.at(static_cast<std::size_t>(i)).get(); }

  /// Rewires input i. Only FunctionGraph::replace calls this (it keeps `clients` right).
  void set_input(int i, Var v) { inputs_.at(static_cast<std::size_t>(i)) = std::move(v); }

  /// "Elemwise{add}" with output names and the user's nodes it stands for, for messages:
  /// `node Gemv{no_inplace} -> "y" (from /nodes/0 Dot)`.
  std::string label() const;

  /// The nodes of the user's graph file this node stands for (ir/provenance.h). A new node
  /// starts with the current OriginScope's.
  const Origins& origins() const { return origins_; }
  void set_origins(Origins origins) { origins_ = std::move(origins); }

 private:
  Apply() = default;
  OpPtr op_;
  Origins origins_;
  VarList inputs_;
  std::vector<std::unique_ptr<Variable>> outputs_;
};

using ApplyPtr = std::shared_ptr<Apply>;

}  // namespace kiln

template <>
struct std::hash<kiln::Var> {
  std::size_t operator()(const kiln::Var& v) const noexcept {
    return std::hash<const void*>()(v.get());
  }
};
