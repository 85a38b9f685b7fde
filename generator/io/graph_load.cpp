#include "io/graph_load.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/graph_load_v2.h"
#include "io/safe_file.h"
#include "io/type_json.h"
#include "io/value_json.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"
#include "ops/blockwise.h"
#include "ops/elemwise.h"
#include "ops/op_table.h"
#include "ops/reshape.h"
#include "ops/scalar/composite.h"
#include "util/suggest.h"

namespace kiln {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// `v` behind a SpecifyShape that checks, at run time, the static lengths `declared` adds to
// v's inferred type. The check node is located at the node that declared the output.
Var checked_declared_shape(const Var& v, const TensorType& declared) {
  std::vector<std::int64_t> lengths;
  for (auto d : declared.shape) lengths.push_back(d == kUnknownLength ? -1 : d);
  Var checked = specify_shape(v, IntList(lengths));
  checked->owner()->set_origins(v->owner()->origins());
  return checked;
}

const std::set<std::string> kTopKeys = {"format", "version", "name",   "variables",
                                        "nodes",  "inputs",  "outputs"};

std::string ptr(const std::string& base, std::size_t i) { return base + "/" + std::to_string(i); }

const Json& require_array(const Json& obj, const std::string& key, const std::string& where) {
  if (!obj.contains(key)) throw UserError("missing \"" + key + "\"", where.empty() ? "/" : where);
  if (!obj[key].is_array())
    throw UserError("\"" + key + "\" must be an array, not " + std::string(obj[key].type_name()),
                    where + "/" + key);
  return obj[key];
}

TensorType parse_type(const Json& t, const std::string& where) {
  if (!t.is_object()) throw UserError("a type must be an object {\"dtype\": ..., \"shape\": [...]}", where);
  if (t.contains("kind")) return parse_kind_type(t, where);  // version 2: rng, none
  check_keys(t, {"dtype", "shape"}, where, "a type");
  if (!t.contains("dtype") || !t["dtype"].is_string())
    throw UserError("a type needs a \"dtype\" string", where);
  auto dt = dtype_from_name(t["dtype"].get<std::string>());
  if (!dt) throw UserError("unknown dtype \"" + t["dtype"].get<std::string>() + "\"", where + "/dtype");
  const Json& shape = require_array(t, "shape", where);
  // NumPy's limit (NPY_MAXDIMS); it also bounds the nesting that reading a value walks.
  constexpr std::size_t kMaxRank = 64;
  if (shape.size() > kMaxRank)
    throw UserError("a type may have at most " + std::to_string(kMaxRank) + " dimensions, not " +
                        std::to_string(shape.size()),
                    where + "/shape");
  Shape s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const Json& d = shape[i];
    if (d.is_null()) {
      s.push_back(kUnknownLength);
    } else if ((d.is_number_integer() || d.is_number_unsigned()) && d.get<std::int64_t>() >= 0) {
      s.push_back(d.get<std::int64_t>());
    } else {
      throw UserError("a shape entry must be a non-negative integer or null, not " + d.dump(),
                      ptr(where + "/shape", i));
    }
  }
  return TensorType(*dt, s);
}

struct VarDecl {
  std::string id;
  std::string name;
  TensorType type;
  std::string pointer;
  const Json* value = nullptr;
  int produced_by = -1;  // node index
  bool is_input = false;
  Var var;               // once built
};

// Reads {"npy": path} through the one gate for files a graph names (io/safe_file.h: a regular
// file of bounded size inside the graph's folder), then checks it against the variable's type.
Array load_npy_value(const Json& v, const std::string& base_dir, const TensorType& type,
                     const std::string& where) {
  check_keys(v, {"npy"}, where, "an npy value");
  if (!v["npy"].is_string()) throw UserError("\"npy\" must be a path string", where + "/npy");
  std::string rel = v["npy"].get<std::string>();
  const std::string bytes = read_graph_relative_file(base_dir, rel, where + "/npy");
  Array a;
  try {
    a = npy::parse(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    throw UserError("npy file \"" + rel + "\": " + e.what(), where + "/npy");
  }
  if (a.dtype() != type.dtype)
    throw UserError("npy file \"" + rel + "\" holds " + std::string(dtype_name(a.dtype())) +
                        " data but the variable's type is " + type.str(),
                    where + "/npy");
  if (a.ndim() != type.ndim())
    throw UserError("npy file \"" + rel + "\" has shape " + shape_str(a.shape()) +
                        " but the variable's type is " + type.str(),
                    where + "/npy");
  for (int d = 0; d < a.ndim(); ++d)
    if (type.shape[static_cast<std::size_t>(d)] != kUnknownLength &&
        type.shape[static_cast<std::size_t>(d)] != a.shape()[static_cast<std::size_t>(d)])
      throw UserError("npy file \"" + rel + "\" has shape " + shape_str(a.shape()) +
                          " but the variable's type is " + type.str(),
                      where + "/npy");
  return a;
}

// "<source>:<line>:<column>" of the byte before `byte` (nlohmann counts bytes read, from 1).
std::string text_place(const std::string& text, std::size_t byte, const std::string& source) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return source + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// A SAX pass that accepts everything and records where the parser gives up.
struct ErrorPlace : nlohmann::json_sax<Json> {
  std::size_t byte = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    byte = position;
    return false;
  }
};

Json parse_json(const std::string& text, const std::string& source) {
  std::string what;
  std::size_t byte = 0;
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    what = e.what();
    byte = e.byte;
  } catch (const Json::out_of_range& e) {
    // A number beyond double's range ("1e309"): the DOM parser forgets where it was; a SAX
    // pass that stops at the error finds it.
    what = e.what();
    ErrorPlace place;
    Json::sax_parse(text, &place);
    byte = place.byte;
  }
  auto pos = what.find("] ");
  throw UserError("malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)),
                  text_place(text, byte, source));
}

// What every graph of a file (the top level and each inner graph) is loaded with.
struct LoadContext {
  int version = 1;
  std::string base_dir;  ///< npy paths are relative to it ("" refuses them)
};

// The variables a graph object (top level or inner) exposes once loaded.
struct GraphBody {
  VarList inputs;
  VarList outputs;
  std::vector<std::string> output_names;  ///< for outputs standing for an identity wrapper's output
};

GraphBody load_graph_object(const Json& root, const std::string& at, const LoadContext& ctx);

// Lets `reader` read inner graphs (props such as a Scan's `inner`) as graph objects of this file.
void read_inner_graphs(PropReader& reader, const LoadContext& ctx) {
  reader.set_inner_graph_loader([&ctx](const Json& g, const std::string& where) {
    check_keys(g, {"variables", "nodes", "inputs", "outputs"}, where, "an inner graph");
    GraphBody body = load_graph_object(g, where, ctx);
    auto inner = std::make_shared<FunctionGraph>(body.inputs, body.outputs, "inner");
    inner->set_output_names(body.output_names);
    return std::shared_ptr<const FunctionGraph>(inner);
  });
}

// The op of a node, from its (normalised) spelling.
OpPtr make_op(const NodeSpelling& node, const std::vector<TensorType>& in_types, const std::string& p,
              const LoadContext& ctx) {
  const std::string& op_name = node.op;
  if (scalar_op_from_name(op_name) && op_name != "Composite") {
    // An Elemwise written with the scalar op's name as "op"; its props are the scalar op's
    // parameters ({"op": "cast", "props": {"dtype": "int8"}}).
    Json scalar = node.props;
    scalar["name"] = op_name;
    return std::make_shared<Elemwise>(scalar_op_from_json(scalar, p + "/props"));
  }
  const OpEntry* entry = find_op(op_name);
  if (!entry && is_format_version_2_op(op_name))
    throw NotImplementedError(op_name + " (graph format version 2) is not implemented yet in kiln", p + "/op");
  if (!entry) {
    std::vector<std::string> names;
    for (const OpEntry& e : op_table()) names.emplace_back(e.name);
    for (const ScalarOpInfo& s : all_scalar_ops()) names.emplace_back(s.name);
    throw UserError("unknown op \"" + op_name + "\"" + did_you_mean(op_name, names), p + "/op");
  }
  PropReader reader(node.props, p + "/props", op_name);
  read_inner_graphs(reader, ctx);
  return entry->make(reader, in_types);
}

GraphBody load_graph_object(const Json& root, const std::string& at, const LoadContext& ctx) {
  // Variables.
  std::map<std::string, VarDecl> decls;
  std::vector<std::string> order;
  const Json& vars = require_array(root, "variables", at);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    std::string p = ptr(at + "/variables", i);
    const Json& v = vars[i];
    if (!v.is_object()) throw UserError("a variable must be an object", p);
    check_keys(v, {"id", "name", "type", "value"}, p, "a variable");
    if (!v.contains("id") || !v["id"].is_string() || v["id"].get<std::string>().empty())
      throw UserError("a variable needs a non-empty string \"id\"", p);
    VarDecl d;
    d.id = v["id"].get<std::string>();
    d.pointer = p;
    if (decls.count(d.id))
      throw UserError("variable id \"" + d.id + "\" is declared twice (first at " +
                          decls[d.id].pointer + ")",
                      p + "/id");
    if (v.contains("name")) {
      if (!v["name"].is_string()) throw UserError("\"name\" must be a string", p + "/name");
      d.name = v["name"].get<std::string>();
    }
    if (!v.contains("type")) throw UserError("variable \"" + d.id + "\" needs a \"type\"", p);
    d.type = parse_type(v["type"], p + "/type");
    if (v.contains("value")) d.value = &v["value"];
    // A none variable is PyTensor's NoneConst, a constant whatever it says ("value": null).
    static const Json kNone;
    if (d.type.kind == TypeKind::None && !d.value) d.value = &kNone;
    order.push_back(d.id);
    decls.emplace(d.id, std::move(d));
  }
  auto lookup = [&](const Json& idj, const std::string& where) -> VarDecl& {
    if (!idj.is_string()) throw UserError("expected a variable id (a string), not " + idj.dump(), where);
    auto it = decls.find(idj.get<std::string>());
    if (it == decls.end())
      throw UserError("variable \"" + idj.get<std::string>() + "\" is not declared in \"variables\"", where);
    return it->second;
  };

  // Graph inputs.
  const Json& ins = require_array(root, "inputs", at);
  VarList input_vars;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    std::string p = ptr(at + "/inputs", i);
    VarDecl& d = lookup(ins[i], p);
    if (d.type.kind == TypeKind::None)
      throw UserError("variable \"" + d.id + "\" is a none (a constant) and cannot be a graph input", p);
    if (d.value) throw UserError("variable \"" + d.id + "\" is a constant and cannot be a graph input", p);
    if (d.is_input) throw UserError("variable \"" + d.id + "\" is listed twice as a graph input", p);
    d.is_input = true;
    d.var = make_input(d.type, d.name);
    d.var->set_file_id(d.id);
    input_vars.push_back(d.var);
  }

  // Nodes: check their ids, then place them in dependency order.
  const Json& nodes = require_array(root, "nodes", at);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string p = ptr(at + "/nodes", n);
    const Json& node = nodes[n];
    if (!node.is_object()) throw UserError("a node must be an object", p);
    check_keys(node, {"op", "props", "inputs", "outputs"}, p, "a node");
    if (!node.contains("op") || !node["op"].is_string()) throw UserError("a node needs an \"op\" string", p);
    if (node.contains("props") && !node["props"].is_object() && !node["props"].is_null())
      throw UserError("\"props\" must be an object", p + "/props");
    const Json& node_ins = require_array(node, "inputs", p);
    for (std::size_t k = 0; k < node_ins.size(); ++k) lookup(node_ins[k], ptr(p + "/inputs", k));
    const Json& outs = require_array(node, "outputs", p);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      std::string op = ptr(p + "/outputs", k);
      VarDecl& d = lookup(outs[k], op);
      if (d.value) throw UserError("variable \"" + d.id + "\" is a constant and cannot be produced by a node", op);
      if (d.is_input) throw UserError("variable \"" + d.id + "\" is a graph input and cannot be produced by a node", op);
      if (d.produced_by >= 0)
        throw UserError("variable \"" + d.id + "\" is produced twice (also by " + at + "/nodes/" +
                            std::to_string(d.produced_by) + ")",
                        op);
      d.produced_by = static_cast<int>(n);
    }
  }
  for (const auto& id : order) {
    VarDecl& d = decls[id];
    if (!d.value && !d.is_input && d.produced_by < 0)
      throw UserError("variable \"" + id + "\" is neither a graph input, a constant, nor the output of a node",
                      d.pointer);
  }

  // Constants.
  for (const auto& id : order) {
    VarDecl& d = decls[id];
    if (!d.value) continue;
    std::string p = d.pointer + "/value";
    Array value = !d.type.is_tensor() ? parse_kind_value(d.value, d.type, p)
                  : d.value->is_object() && d.value->contains("npy")
                      ? load_npy_value(*d.value, ctx.base_dir, d.type, p)
                      : parse_value(*d.value, d.type, p);
    d.var = make_constant(value, d.name, d.type.kind);
    d.var->set_file_id(d.id);
  }

  // Kahn's algorithm in file order; whatever cannot be placed is on (or after) a cycle.
  std::vector<int> missing(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> waiting(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (const auto& in : nodes[n]["inputs"]) {
      const VarDecl& d = decls[in.get<std::string>()];
      if (d.produced_by >= 0) {
        ++missing[n];
        waiting[static_cast<std::size_t>(d.produced_by)].push_back(n);
      }
    }
  std::vector<std::size_t> ready, placed;
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (missing[n] == 0) ready.push_back(n);
  while (!ready.empty()) {
    std::sort(ready.begin(), ready.end(), std::greater<>());
    std::size_t n = ready.back();
    ready.pop_back();
    placed.push_back(n);
    for (std::size_t m : waiting[n])
      if (--missing[m] == 0) ready.push_back(m);
  }
  if (placed.size() != nodes.size()) {
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (missing[n] > 0)
        throw UserError("the nodes form a cycle (this node depends on its own output)", ptr(at + "/nodes", n));
  }

  for (std::size_t n : placed) {
    std::string p = ptr(at + "/nodes", n);
    const Json& node = nodes[n];
    static const Json kNoProps = Json::object();
    NodeSpelling spelling;
    spelling.op = node["op"].get<std::string>();
    spelling.props = node.contains("props") && !node["props"].is_null() ? node["props"] : kNoProps;
    for (const auto& in : node["inputs"]) spelling.inputs.push_back(decls[in.get<std::string>()].var);
    const Json& outs = node["outputs"];
    if (is_identity_wrapper(spelling.op)) {
      if (outs.size() != 1)
        throw UserError(spelling.op + " has 1 output but the node lists " + std::to_string(outs.size()), p + "/outputs");
      VarDecl& d = decls[outs[0].get<std::string>()];
      d.var = identity_wrapper_output(spelling.op, spelling.props, spelling.inputs, d.type, p);
      continue;
    }
    normalize_node(spelling);
    VarList produced;
    std::string what;  // the op, for messages
    const Origins origins = make_origins({Origin{p, node["op"].get<std::string>()}});
    if (spelling.op == "Blockwise" && !blockwise_core_is_looped(spelling.props)) {
      PropReader reader(spelling.props, p + "/props", spelling.op);
      read_inner_graphs(reader, ctx);  // a core op's (a Scan's step function)
      OriginScope scope(origins);  // every node of the expansion points back at this one
      try {
        produced = blockwise_by_vectorize(reader, spelling.inputs);
      } catch (const NotImplementedError& e) {
        throw NotImplementedError(e.message(), e.where().empty() ? p : e.where());
      } catch (const UserError& e) {
        throw UserError(e.message(), e.where().empty() ? p : e.where());
      }
      what = "Blockwise (expanded by its core op's batching rule)";
    } else {
      std::vector<TensorType> in_types;
      for (const auto& in : spelling.inputs) in_types.push_back(in->type());
      OpPtr op = make_op(spelling, in_types, p, ctx);
      ApplyPtr apply;
      try {
        apply = make_node(op, spelling.inputs);
      } catch (const NotImplementedError& e) {
        throw NotImplementedError(e.message(), p);
      } catch (const UserError& e) {
        throw UserError(e.message(), p);
      }
      apply->set_origins(origins);
      produced = apply->outputs();
      what = op->str();
    }
    if (outs.size() != produced.size())
      throw UserError(what + " has " + std::to_string(produced.size()) + " output(s) but the node lists " +
                          std::to_string(outs.size()),
                      p + "/outputs");
    for (std::size_t k = 0; k < outs.size(); ++k) {
      VarDecl& d = decls[outs[k].get<std::string>()];
      Var v = produced[k];
      const TensorType& inferred = v->type();
      if (d.type.kind != inferred.kind || d.type.dtype != inferred.dtype || d.type.ndim() != inferred.ndim() ||
          !d.type.compatible_with(inferred))
        throw UserError("variable \"" + d.id + "\" is declared " + d.type.str() + " but " + what +
                            " gives " + inferred.str(),
                        ptr(p + "/outputs", k));
      if (d.type.is_tensor() && !inferred.at_least_as_specific_as(d.type)) {
        // The file declares a static length the op does not prove (PyTensor's inference can be
        // stronger than kiln's). It is checked at run time, as a SpecifyShape would: generated
        // code then trusts it, so it must never be believed unchecked.
        v = checked_declared_shape(v, d.type);
      }
      v->refine_type(d.type);
      v->set_name(d.name);
      v->set_file_id(d.id);
      d.var = v;
    }
  }

  GraphBody body;
  body.inputs = input_vars;
  const Json& outs = require_array(root, "outputs", at);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const std::string p = ptr(at + "/outputs", i);
    const VarDecl& d = lookup(outs[i], p);
    if (d.type.kind == TypeKind::None)
      throw UserError("variable \"" + d.id + "\" is a none and cannot be a graph output (it carries nothing)", p);
    body.outputs.push_back(d.var);
    // An identity wrapper's output stands for its input: the output keeps the wrapper's name.
    const bool wrapped = d.var->file_id() != d.id;
    body.output_names.push_back(wrapped ? (d.name.empty() ? d.id : d.name) : std::string());
  }
  return body;
}

}  // namespace

FunctionGraph load_graph_text(const std::string& text, const std::string& base_dir,
                              const std::string& source) {
  Json root = parse_json(text, source);
  if (!root.is_object()) throw UserError("a graph file must be a JSON object", "/");
  for (auto it = root.begin(); it != root.end(); ++it)
    if (!kTopKeys.count(it.key()) && it.key().rfind("x-", 0) != 0)
      throw UserError("unknown top-level key \"" + it.key() + "\" (tools may add keys starting with x-)",
                      "/" + it.key());
  if (!root.contains("format") || root["format"] != "kiln-graph")
    throw UserError("\"format\" must be \"kiln-graph\"", "/format");
  if (!root.contains("version") || !root["version"].is_number_integer())
    throw UserError("\"version\" must be the integer 1 or 2", "/version");
  LoadContext ctx;
  ctx.base_dir = base_dir;
  const std::int64_t version = root["version"].get<std::int64_t>();
  if (version != 1 && version != 2)
    throw UserError("unsupported version " + root["version"].dump() + " (this kiln reads versions 1 and 2)",
                    "/version");
  ctx.version = static_cast<int>(version);
  if (ctx.version == 1) refuse_version_2_constructs(root);
  std::string name = "graph";
  if (root.contains("name")) {
    if (!root["name"].is_string()) throw UserError("\"name\" must be a string", "/name");
    name = root["name"].get<std::string>();
  }

  GraphBody body = load_graph_object(root, "", ctx);
  FunctionGraph fg(body.inputs, body.outputs, name);
  std::vector<std::string> names = fg.output_names();
  for (std::size_t i = 0; i < names.size() && i < body.output_names.size(); ++i)
    if (names[i].empty()) names[i] = body.output_names[i];
  fg.set_output_names(names);
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it.key().rfind("x-", 0) == 0) fg.extras().emplace_back(it.key(), it.value());
  return fg;
}

std::string read_graph_file(const std::string& path) { return read_named_file(path); }

std::string graph_file_folder(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

FunctionGraph load_graph_file(const std::string& path) {
  return load_graph_text(read_graph_file(path), graph_file_folder(path), path);
}

}  // namespace kiln
