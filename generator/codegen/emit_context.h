// What an emitter gets for one node: the C names of its variables, the code that gives an
// output its memory, and the template data every node's code starts from. Shared by the
// backends that generate C++ over the generated-code runtime (templates/cpp/prologue/).
#pragma once

#include <string>
#include <utility>

#include "codegen/lowering.h"
#include "codegen/render.h"

namespace kiln {

/// Per-node information and helpers for emitters.
class NodeEmitContext {
 public:
  NodeEmitContext(const Apply& node, const LoweredGraph& lg, int step, std::string kernel_prefix = "")
      : node_(node), lg_(lg), step_(step), kernel_prefix_(std::move(kernel_prefix)) {}

  const Apply& node() const { return node_; }
  int step() const { return step_; }
  /// A C identifier unique to this node within the source file (graph, function and step):
  /// what a device backend names the node's kernels after.
  std::string kernel_name() const { return kernel_prefix_ + "_s" + std::to_string(step_); }
  /// What kernel_name() starts with: unique to the graph and function within the source file,
  /// for code that nodes of one function share (the cpp backend's reduction folds).
  const std::string& kernel_prefix() const { return kernel_prefix_; }
  /// C name of input i / output i ("v3").
  std::string in(int i) const;
  std::string out(int i) const;
  const Variable& in_var(int i) const { return *node_.input(i); }
  const Variable& out_var(int i) const { return *node_.output_ptr(i); }
  bool input_is_constant(int i) const { return node_.input(i)->is_constant(); }
  const FunctionGraph& graph() const { return *lg_.graph; }
  /// C name of any variable of the graph.
  std::string name_of(const Variable& v) const { return lg_.var(&v).cname; }
  /// The gather computing input i inside this node's loop (codegen/gather_fusion.h), or null.
  const Apply* fused_gather(int i) const;
  /// The context slot of the node's scratch memory (emitters with needs_scratch).
  int scratch_slot() const;
  /// The name of the function emitted for the node's inner graph `use` (a Scan's step): called
  /// as `fn(ctx, inputs, sink)` like the graph's own function (InnerGraphUse::function).
  const std::string& inner_function(std::size_t use = 0) const;
  /// Code that gives output i its memory, once its shape has been set (empty for views):
  /// checks declared static lengths, then binds a workspace slot or the output's final memory.
  std::string alloc(int i) const;
  /// Template data common to every node: "where" is `kWhere` (the node's error prefix).
  TemplateData base_data() const;

 private:
  const Apply& node_;
  const LoweredGraph& lg_;
  int step_;
  std::string kernel_prefix_;
};

}  // namespace kiln
