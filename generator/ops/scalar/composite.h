// Composite: a fused scalar graph used as the scalar op of an Elemwise (or a CAReduce).
// Stored flat, in SSA form: values [0, num_inputs) are the inputs, then constants and node
// outputs; nodes are in topological order. The graph-file form is GRAPH_FORMAT.md's
// "Composite" object; each Composite (nested ones too) is its own id scope.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

class CompositeGraph {
 public:
  struct Value {
    DType dtype = DType::Float64;
    /// For constants: a 0-d array of `dtype`; undefined() otherwise.
    Array constant;
    bool is_constant() const { return constant.defined(); }
  };
  struct Node {
    ScalarOp op;
    std::vector<int> inputs;   ///< value indices
    std::vector<int> outputs;  ///< value indices
  };

  int num_inputs() const { return num_inputs_; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& outputs() const { return outputs_; }
  std::vector<DType> input_dtypes() const;
  std::vector<DType> output_dtypes() const;

  /// Building (used by the loader and by fusion). Nodes must be added in topological order.
  int add_input(DType dt);
  int add_constant(Array value0d);
  /// Adds a node; output dtypes come from the op's dtype rule. Returns the output indices.
  std::vector<int> add_node(const ScalarOp& op, const std::vector<int>& inputs);
  void add_output(int value);

  /// Canonical graph-file form (ids i0.., c0.., t0..), deterministic.
  nlohmann::json to_json() const;
  /// Parses GRAPH_FORMAT.md's Composite object. `where` is its JSON pointer (for errors).
  static std::shared_ptr<const CompositeGraph> from_json(const nlohmann::json& j,
                                                         const std::string& where);

  /// Infix rendering of output(s) as PyTensor prints a Composite's name: "log1p(i0)".
  std::string expression() const;

 private:
  int num_inputs_ = 0;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<int> outputs_;
};

/// Parses a scalar op as written in graph files: a name ("add"), an object with parameters
/// ({"name": "cast", "dtype": "int8"}) or a Composite object. `where` is its JSON pointer.
ScalarOp scalar_op_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace kiln
