// FunctionGraph: a graph with declared inputs and outputs, the unit every pass, the evaluator
// and the code generator work on. It tracks each variable's clients so that replace() can
// rewire every use, and prunes nodes that nothing uses any more.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "ir/op.h"

namespace kiln {

/// A use of a variable: input `index` of `node`, or (node == nullptr) graph output `index`.
struct Client {
  Apply* node;
  int index;
  bool operator==(const Client& o) const { return node == o.node && index == o.index; }
};

struct ClientHash {
  std::size_t operator()(const Client& c) const {
    return std::hash<const void*>()(c.node) * 31u + static_cast<std::size_t>(c.index);
  }
};

/// A variable's clients. Long lists (a constant or an input read by thousands of nodes) get a
/// position index so that removing a client stays O(1) and rewriting big graphs stays linear.
class ClientList {
 public:
  const std::vector<Client>& list() const { return list_; }
  void add(Client c);
  void remove(Client c);
  void clear() {
    list_.clear();
    pos_.clear();
  }

 private:
  static constexpr std::size_t kIndexAbove = 32;
  std::vector<Client> list_;
  std::unordered_map<Client, std::size_t, ClientHash> pos_;  ///< empty while the list is short
};

/// What one replace() or replace_all() did to a graph: the nodes it brought in and the nodes
/// it pruned (kept alive until the change listener has seen them).
struct GraphChange {
  std::string reason;  ///< as given to replace (the rewrite's name)
  std::vector<Apply*> added;
  std::vector<ApplyPtr> removed;
};

class FunctionGraph {
 public:
  FunctionGraph() = default;
  /// Builds the graph between `inputs` and `outputs`. Every input of the computation must be
  /// listed in `inputs` (or be a constant); otherwise a UserError names the missing variable.
  FunctionGraph(VarList inputs, VarList outputs, std::string name = "graph");

  FunctionGraph(const FunctionGraph&) = delete;
  FunctionGraph& operator=(const FunctionGraph&) = delete;
  FunctionGraph(FunctionGraph&&) = default;
  FunctionGraph& operator=(FunctionGraph&&) = default;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const VarList& inputs() const { return inputs_; }
  const VarList& outputs() const { return outputs_; }
  /// Names given to outputs (parallel to outputs(); empty when the output has none of its own).
  const std::vector<std::string>& output_names() const { return output_names_; }
  void set_output_names(std::vector<std::string> names) { output_names_ = std::move(names); }

  /// Extra top-level keys of the graph file starting with "x-" (kept for tools).
  std::vector<std::pair<std::string, Json>>& extras() { return extras_; }
  const std::vector<std::pair<std::string, Json>>& extras() const { return extras_; }

  /// Apply nodes in a deterministic topological order (depends only on the graph structure).
  std::vector<Apply*> toposort() const;
  /// Every variable (inputs, constants, node outputs) in toposort order, each once.
  std::vector<Variable*> variables() const;
  std::size_t num_nodes() const { return nodes_.size(); }
  bool contains(const Apply* node) const { return nodes_.count(const_cast<Apply*>(node)) != 0; }

  /// The uses of a variable inside this graph.
  const std::vector<Client>& clients(const Variable* v) const;

  /// Replaces every use of `old_var` by `new_var`. The new type must be compatible (same
  /// dtype, rank, no conflicting static length) — otherwise a UserError that says both types
  /// and `reason`. New nodes above `new_var` join the graph; unused nodes are pruned. The nodes
  /// that join inherit the origins of `old_var`'s node and of the pruned nodes.
  void replace(const Var& old_var, const Var& new_var, const std::string& reason = "");
  /// replace() of each pair, as one change (the new nodes inherit the origins of all of it).
  void replace_all(const std::vector<std::pair<Var, Var>>& pairs, const std::string& reason = "");

  /// Replaces graph output `i` only (not other uses of that variable).
  void set_output(int i, const Var& v);

  /// A deep copy: new Variables and Apply nodes (ops and constant values are shared; they are
  /// immutable). `map`, if given, receives old -> new for every variable.
  FunctionGraph clone(std::unordered_map<const Variable*, Var>* map = nullptr) const;

  /// Checks the graph's invariants (clients consistent, types agree with inference, acyclic,
  /// every input known). Throws InternalError with a description. Used after passes in tests.
  void verify() const;

  /// The Var (shared handle) of a variable of this graph.
  Var handle(const Variable* v) const;

  /// Called for every node that joins the graph from now on (rewrite drivers use it to visit
  /// the nodes a replacement brings in). Pass an empty function to stop.
  void set_import_listener(std::function<void(Apply*)> listener) { on_import_ = std::move(listener); }

  /// Called after every replace()/replace_all() that added or removed nodes (the rewrite
  /// pipeline's record of what each pass replaced). Pass an empty function to stop.
  void set_change_listener(std::function<void(const GraphChange&)> listener) { on_change_ = std::move(listener); }

 private:
  void replace_one(const Var& old_var, const Var& new_var, const std::string& reason);
  // Output k becomes new_var; it keeps old_var's name (or id) as its output name.
  void replace_output(std::size_t k, const Var& old_var, const Var& new_var);
  void import_var(const Var& v);
  void import_node(const ApplyPtr& node);
  void add_client(const Var& v, Client c);
  void remove_client(const Variable* v, Client c);
  void prune_if_unused(Apply* node);
  void attach(const Var& v);

  std::string name_ = "graph";
  VarList inputs_;
  VarList outputs_;
  std::vector<std::string> output_names_;
  std::vector<std::pair<std::string, Json>> extras_;
  std::unordered_map<Apply*, ApplyPtr> nodes_;
  std::unordered_map<const Variable*, ClientList> clients_;
  std::unordered_map<const Variable*, Var> handles_;
  std::unordered_set<const Variable*> input_set_;
  std::function<void(Apply*)> on_import_;
  std::function<void(const GraphChange&)> on_change_;
  GraphChange* change_ = nullptr;  ///< the change being recorded, during replace_all
};

}  // namespace kiln
