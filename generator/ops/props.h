// Reading an op's props from a graph file: typed getters that name the JSON pointer of a bad
// prop, and a final check that refuses unknown props (while accepting and ignoring the
// in-place/check props GRAPH_FORMAT.md lists).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/type.h"

namespace kiln {

class FunctionGraph;

/// Loads an inner graph (an object with variables, nodes, inputs, outputs) found at a JSON
/// pointer; the graph loader provides it (ops cannot load graphs themselves).
using InnerGraphLoader =
    std::function<std::shared_ptr<const FunctionGraph>(const nlohmann::json& graph, const std::string& pointer)>;

class PropReader {
 public:
  /// `props` is the node's props object (or null when omitted); `pointer` its JSON pointer.
  PropReader(const nlohmann::json& props, std::string pointer, std::string op_name);

  const std::string& op_name() const { return op_name_; }
  bool has(const std::string& key) const;
  /// JSON pointer of a prop.
  std::string where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& msg) const;

  const nlohmann::json& raw(const std::string& key);
  std::int64_t get_int(const std::string& key);
  std::int64_t get_int(const std::string& key, std::int64_t dflt);
  bool get_bool(const std::string& key, bool dflt);
  std::string get_string(const std::string& key);
  DType get_dtype(const std::string& key);
  std::optional<DType> get_optional_dtype(const std::string& key);
  /// An axis prop: null (all axes) -> nullopt; an int or a list of ints -> that list.
  std::optional<std::vector<std::int64_t>> get_axes(const std::string& key);
  /// A list of ints.
  std::vector<std::int64_t> get_int_list(const std::string& key);
  /// An inner graph prop (OpFromGraph's "inner"), loaded with its own id scope through the
  /// loader set by set_inner_graph_loader (a UserError when there is none).
  std::shared_ptr<const FunctionGraph> get_inner_graph(const std::string& key);
  void set_inner_graph_loader(InnerGraphLoader loader) { inner_loader_ = std::move(loader); }
  const InnerGraphLoader& inner_graph_loader() const { return inner_loader_; }

  /// Refuses every prop that was not read and is not one of the accepted-and-ignored ones.
  void finish();

 private:
  const nlohmann::json& require(const std::string& key);
  nlohmann::json props_;
  std::string pointer_;
  std::string op_name_;
  std::set<std::string> read_;
  InnerGraphLoader inner_loader_;
};

}  // namespace kiln
