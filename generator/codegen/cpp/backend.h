// The C++ backend's registry: which template/emitter renders each op, and the context an
// emitter gets for one node (names of its variables, how to allocate its outputs, where to
// report errors). Adding an op to the backend is one emitter (templates/cpp/ops/*.mustache
// plus a short function in codegen/cpp/emit_*.cpp) and one line in backend.cpp's table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/lowering.h"
#include "codegen/render.h"

namespace kiln {

/// Per-node information and helpers for emitters.
class NodeEmitContext {
 public:
  NodeEmitContext(const Apply& node, const LoweredGraph& lg, int step) : node_(node), lg_(lg), step_(step) {}

  const Apply& node() const { return node_; }
  int step() const { return step_; }
  /// C name of input i / output i ("v3").
  std::string in(int i) const;
  std::string out(int i) const;
  const Variable& in_var(int i) const { return *node_.input(i); }
  const Variable& out_var(int i) const { return *node_.output_ptr(i); }
  bool input_is_constant(int i) const { return node_.input(i)->is_constant(); }
  /// C name of any variable of the graph.
  std::string name_of(const Variable& v) const { return lg_.var(&v).cname; }
  /// The gather computing input i inside this node's loop (codegen/gather_fusion.h), or null.
  const Apply* fused_gather(int i) const;
  const FunctionGraph& graph() const { return *lg_.graph; }
  /// Code that gives output i its memory, once its shape has been set (empty for views):
  /// checks declared static lengths, then binds a workspace slot or the output's final memory.
  std::string alloc(int i) const;
  /// The context slot of the node's scratch memory (entries with needs_scratch).
  int scratch_slot() const;
  /// Template data common to every node: "where" is `kWhere` (the node's error prefix).
  TemplateData base_data() const;

 private:
  const Apply& node_;
  const LoweredGraph& lg_;
  int step_;
};

/// C++ element type of a dtype ("double", "int8_t", "bool").
std::string ctype(DType dt);
/// A DLDataType initializer ("DLDataType{2, 64, 1}").
std::string dl_dtype_literal(DType dt);
/// `Tensor<ctype, ndim>` for a variable.
std::string tensor_type(const Variable& v);

using CppEmitFn = std::string (*)(const NodeEmitContext&);

struct CppOpEntry {
  std::string_view op_name;  ///< Op::name()
  CppEmitFn emit;
  bool is_view;  ///< output 0 aliases input 0 (no storage of its own)
  bool needs_blas = false;  ///< the generated code calls CBLAS (link OpenBLAS)
  bool needs_scratch = false;  ///< the node keeps work buffers in a slot of its own
};

const std::vector<CppOpEntry>& cpp_backend_table();
/// The entry for a node's op; throws NotImplementedError "`Op{props}` has no cpp
/// implementation" when the backend lacks it.
const CppOpEntry& cpp_entry(const Op& op);

}  // namespace kiln
