// Small builders for the graph-format version 2 tests: graph files as JSON, refusals with their
// place, and arrays.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/graph_load.h"
#include "ir/error.h"
#include "kiln/runtime/array.hpp"

namespace kiln::testing {

using Json = nlohmann::json;

/// A tensor type {"dtype", "shape"}; shape entries are ints or null.
/// A version-1 graph file of one node `op` (props omitted when null) with inputs x0, x1, ... of
/// `input_types` and outputs o0, o1, ... of `output_types`, as text.
inline std::string one_node_graph_text(const std::string& op, const Json& props, const std::vector<Json>& input_types,
                                       const std::vector<Json>& output_types) {
  Json g = {{"format", "kiln-graph"}, {"version", 1}, {"name", "t"}};
  Json vars = Json::array(), ins = Json::array(), outs = Json::array();
  for (std::size_t i = 0; i < input_types.size(); ++i) {
    vars.push_back({{"id", "x" + std::to_string(i)}, {"type", input_types[i]}});
    ins.push_back("x" + std::to_string(i));
  }
  for (std::size_t k = 0; k < output_types.size(); ++k) {
    vars.push_back({{"id", "o" + std::to_string(k)}, {"type", output_types[k]}});
    outs.push_back("o" + std::to_string(k));
  }
  Json node = {{"op", op}, {"inputs", ins}, {"outputs", outs}};
  if (!props.is_null()) node["props"] = props;
  g["variables"] = vars;
  g["nodes"] = Json::array({node});
  g["inputs"] = ins;
  g["outputs"] = outs;
  return g.dump();
}

inline Json tensor_type(const std::string& dtype, const Json& shape) { return {{"dtype", dtype}, {"shape", shape}}; }

/// A variable declaration; `value` (when not discarded) makes it a constant.
inline Json var(const std::string& id, const Json& type, const Json& value = Json(Json::value_t::discarded)) {
  Json v = {{"id", id}, {"type", type}};
  if (!value.is_discarded()) v["value"] = value;
  return v;
}

/// A variable declaration with a name.
inline Json named_var(const std::string& id, const Json& type, const std::string& name) {
  Json v = var(id, type);
  v["name"] = name;
  return v;
}

inline Json node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                 const Json& props = nullptr) {
  Json n = {{"op", op}, {"inputs", inputs}, {"outputs", outputs}};
  if (!props.is_null()) n["props"] = props;
  return n;
}

/// A graph object (top level when `version` > 0, else an inner graph).
inline Json graph_json(int version, const std::vector<Json>& variables, const std::vector<Json>& nodes,
                       const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  Json g = Json::object();
  if (version > 0) {
    g["format"] = "kiln-graph";
    g["version"] = version;
    g["name"] = "t";
  }
  g["variables"] = variables;
  g["nodes"] = nodes;
  g["inputs"] = inputs;
  g["outputs"] = outputs;
  return g;
}

struct Refusal {
  std::string where;    ///< UserError::where(); empty when the graph loaded
  std::string message;  ///< what()
  bool not_implemented = false;
};

inline Refusal refusal_of(const Json& g) {
  try {
    load_graph_text(g.dump(), "");
  } catch (const NotImplementedError& e) {
    return {e.where(), e.what(), true};
  } catch (const UserError& e) {
    return {e.where(), e.what(), false};
  }
  return {"", "<loaded without error>", false};
}

inline Array f64_array(const Shape& shape, const std::vector<double>& values) {
  Array a = Array::empty(DType::Float64, shape);
  for (std::size_t i = 0; i < values.size(); ++i) a.data<double>()[i] = values[i];
  return a;
}

inline Array int_scalar(DType dt, std::int64_t v) {
  Array a = Array::empty(dt, {});
  visit_real_dtype(dt, [&](auto t) { *a.data<decltype(t)>() = static_cast<decltype(t)>(v); });
  return a;
}

/// Every element as a double, in row-major order (any layout, any dtype).
inline std::vector<double> values_of(const Array& a) {
  Array c = a.contiguous();
  std::vector<double> out;
  visit_real_dtype(c.dtype(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < c.size(); ++i) out.push_back(static_cast<double>(c.data<T>()[i]));
  });
  return out;
}

}  // namespace kiln::testing
