#include "ops/scalar/composite.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/scalar_json.h"
#include "ir/type.h"
#include "ops/scalar/scalar_loop.h"
#include "util/suggest.h"

namespace kiln {

using Json = nlohmann::json;

std::vector<DType> CompositeGraph::input_dtypes() const {
  std::vector<DType> out;
  for (int i = 0; i < num_inputs_; ++i) out.push_back(values_[static_cast<std::size_t>(i)].dtype);
  return out;
}

std::vector<DType> CompositeGraph::output_dtypes() const {
  std::vector<DType> out;
  for (int v : outputs_) out.push_back(values_[static_cast<std::size_t>(v)].dtype);
  return out;
}

int CompositeGraph::add_input(DType dt) {
  KILN_INTERNAL_ASSERT(static_cast<int>(values_.size()) == num_inputs_,
                       "Composite inputs must be added first");
  values_.push_back(Value{dt, Array()});
  return num_inputs_++;
}

int CompositeGraph::add_constant(Array value0d) {
  KILN_INTERNAL_ASSERT(value0d.ndim() == 0, "Composite constants are 0-d");
  values_.push_back(Value{value0d.dtype(), std::move(value0d)});
  return static_cast<int>(values_.size()) - 1;
}

std::vector<int> CompositeGraph::add_node(const ScalarOp& op, const std::vector<int>& inputs) {
  std::vector<DType> in_dtypes;
  for (int v : inputs) {
    KILN_INTERNAL_ASSERT(v >= 0 && v < static_cast<int>(values_.size()), "bad Composite value");
    in_dtypes.push_back(values_[static_cast<std::size_t>(v)].dtype);
  }
  std::vector<int> outs;
  for (DType dt : op.output_dtypes(in_dtypes)) {
    values_.push_back(Value{dt, Array()});
    outs.push_back(static_cast<int>(values_.size()) - 1);
  }
  nodes_.push_back(Node{op, inputs, outs});
  return outs;
}

void CompositeGraph::add_output(int value) {
  KILN_INTERNAL_ASSERT(value >= 0 && value < static_cast<int>(values_.size()), "bad output");
  outputs_.push_back(value);
}

namespace {

// Canonical ids: inputs i0.., constants c0.., computed values t0...
std::vector<std::string> canonical_ids(const CompositeGraph& g) {
  std::vector<std::string> ids(g.values().size());
  int ci = 0, ti = 0;
  for (std::size_t v = 0; v < g.values().size(); ++v) {
    if (static_cast<int>(v) < g.num_inputs())
      ids[v] = "i" + std::to_string(v);
    else if (g.values()[v].is_constant())
      ids[v] = "c" + std::to_string(ci++);
    else
      ids[v] = "t" + std::to_string(ti++);
  }
  return ids;
}

const std::set<std::string> kCompositeKeys = {"name", "variables", "inputs", "nodes", "outputs"};

}  // namespace

Json CompositeGraph::to_json() const {
  auto ids = canonical_ids(*this);
  Json vars = Json::array();
  for (std::size_t v = 0; v < values_.size(); ++v) {
    Json var = {{"id", ids[v]}, {"dtype", std::string(dtype_name(values_[v].dtype))}};
    if (values_[v].is_constant()) var["value"] = element_to_json(values_[v].constant, nullptr);
    vars.push_back(var);
  }
  Json nodes = Json::array();
  for (const Node& n : nodes_) {
    Json ins = Json::array(), outs = Json::array();
    for (int v : n.inputs) ins.push_back(ids[static_cast<std::size_t>(v)]);
    for (int v : n.outputs) outs.push_back(ids[static_cast<std::size_t>(v)]);
    nodes.push_back(Json{{"op", n.op.to_json()}, {"inputs", ins}, {"outputs", outs}});
  }
  Json inputs = Json::array(), outputs = Json::array();
  for (int i = 0; i < num_inputs_; ++i) inputs.push_back(ids[static_cast<std::size_t>(i)]);
  for (int v : outputs_) outputs.push_back(ids[static_cast<std::size_t>(v)]);
  return Json{{"name", "Composite"}, {"variables", vars}, {"inputs", inputs},
              {"nodes", nodes},      {"outputs", outputs}};
}

ScalarOp scalar_op_from_json(const Json& j, const std::string& where) {
  std::string name;
  if (j.is_string()) {
    name = j.get<std::string>();
  } else if (j.is_object()) {
    if (!j.contains("name") || !j["name"].is_string())
      throw UserError("a scalar op object needs a string \"name\"", where);
    name = j["name"].get<std::string>();
    if (name == "Composite") return ScalarOp::composite(CompositeGraph::from_json(j, where));
    if (name == "ScalarLoop") return scalar_loop_from_json(j, where);
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "name") continue;
      if (name == "cast" && it.key() == "dtype") continue;
      throw UserError("unknown prop \"" + it.key() + "\" of scalar op " + name +
                          (name == "cast" ? did_you_mean(it.key(), {"dtype"}) : std::string()),
                      where + "/" + it.key());
    }
  } else {
    throw UserError("a scalar op must be a name or an object, not " + std::string(j.type_name()),
                    where);
  }
  if (name == "Composite" || name == "ScalarLoop")
    throw UserError("a " + name + " scalar op must be an object with its inner graph", where);
  auto id = scalar_op_from_name(name);
  if (!id) {
    std::vector<std::string> names;
    for (const ScalarOpInfo& s : all_scalar_ops()) names.emplace_back(s.name);
    throw UserError("unknown scalar op \"" + name + "\"" + did_you_mean(name, names), where);
  }
  if (*id == ScalarOpId::Cast) {
    if (!j.is_object() || !j.contains("dtype"))
      throw UserError("cast needs a \"dtype\": {\"name\": \"cast\", \"dtype\": ...}", where);
    const Json& d = j["dtype"];
    auto dt = d.is_string() ? dtype_from_name(d.get<std::string>()) : std::nullopt;
    if (!dt) throw UserError("unknown dtype " + d.dump(), where + "/dtype");
    return ScalarOp::cast(*dt);
  }
  return ScalarOp(*id);
}

std::shared_ptr<const CompositeGraph> CompositeGraph::from_json(const Json& j,
                                                                 const std::string& where) {
  if (!j.is_object()) throw UserError("a Composite must be an object", where);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!kCompositeKeys.count(it.key()))
      throw UserError("unknown key \"" + it.key() + "\" in a Composite", where + "/" + it.key());
  for (const char* key : {"variables", "inputs", "nodes", "outputs"})
    if (!j.contains(key) || !j[key].is_array())
      throw UserError(std::string("a Composite needs an array \"") + key + "\"", where);

  struct Decl {
    DType dtype;
    std::string pointer;
    const Json* value = nullptr;
  };
  std::map<std::string, Decl> decls;
  std::vector<std::string> decl_order;
  const Json& vars = j["variables"];
  for (std::size_t i = 0; i < vars.size(); ++i) {
    std::string p = where + "/variables/" + std::to_string(i);
    const Json& v = vars[i];
    if (!v.is_object()) throw UserError("a Composite variable must be an object", p);
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it.key() != "id" && it.key() != "dtype" && it.key() != "value" && it.key() != "name")
        throw UserError("unknown key \"" + it.key() + "\" in a Composite variable", p + "/" + it.key());
    if (!v.contains("id") || !v["id"].is_string()) throw UserError("variable needs a string \"id\"", p);
    std::string id = v["id"].get<std::string>();
    if (!v.contains("dtype") || !v["dtype"].is_string())
      throw UserError("Composite variable \"" + id + "\" needs a \"dtype\" string", p);
    auto dt = dtype_from_name(v["dtype"].get<std::string>());
    if (!dt) throw UserError("unknown dtype " + v["dtype"].dump(), p + "/dtype");
    if (decls.count(id)) throw UserError("variable id \"" + id + "\" is declared twice", p + "/id");
    decls[id] = Decl{*dt, p, v.contains("value") ? &v["value"] : nullptr};
    decl_order.push_back(id);
  }

  auto g = std::make_shared<CompositeGraph>();
  std::map<std::string, int> value_of;
  auto lookup_decl = [&](const Json& idj, const std::string& p) -> const Decl& {
    if (!idj.is_string()) throw UserError("expected a variable id string", p);
    auto it = decls.find(idj.get<std::string>());
    if (it == decls.end())
      throw UserError("undeclared variable \"" + idj.get<std::string>() + "\"", p);
    return it->second;
  };

  const Json& ins = j["inputs"];
  for (std::size_t i = 0; i < ins.size(); ++i) {
    std::string p = where + "/inputs/" + std::to_string(i);
    const Decl& d = lookup_decl(ins[i], p);
    std::string id = ins[i].get<std::string>();
    if (d.value) throw UserError("a Composite input cannot be a constant", p);
    if (value_of.count(id)) throw UserError("variable \"" + id + "\" is listed twice as an input", p);
    value_of[id] = g->add_input(d.dtype);
  }
  for (const auto& id : decl_order) {
    const Decl& d = decls[id];
    if (d.value) value_of[id] = g->add_constant(parse_scalar(*d.value, d.dtype, d.pointer + "/value"));
  }

  // Nodes may come in any order: place each once all its inputs exist (a cycle never does).
  const Json& nodes = j["nodes"];
  std::map<std::string, std::size_t> producer;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string p = where + "/nodes/" + std::to_string(n);
    const Json& node = nodes[n];
    if (!node.is_object()) throw UserError("a node must be an object", p);
    for (auto it = node.begin(); it != node.end(); ++it)
      if (it.key() != "op" && it.key() != "inputs" && it.key() != "outputs")
        throw UserError("unknown key \"" + it.key() + "\" in a Composite node", p + "/" + it.key());
    if (!node.contains("op")) throw UserError("a node needs an \"op\"", p);
    for (const char* key : {"inputs", "outputs"})
      if (!node.contains(key) || !node[key].is_array())
        throw UserError(std::string("a node needs an array \"") + key + "\"", p);
    for (std::size_t k = 0; k < node["outputs"].size(); ++k) {
      std::string op = p + "/outputs/" + std::to_string(k);
      const Decl& d = lookup_decl(node["outputs"][k], op);
      std::string id = node["outputs"][k].get<std::string>();
      if (d.value || value_of.count(id))
        throw UserError("variable \"" + id + "\" is an input or constant and cannot be produced", op);
      if (producer.count(id)) throw UserError("variable \"" + id + "\" is produced twice", op);
      producer[id] = n;
    }
  }
  std::vector<bool> placed(nodes.size(), false);
  std::size_t remaining = nodes.size();
  while (remaining > 0) {
    bool progress = false;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (placed[n]) continue;
      std::string p = where + "/nodes/" + std::to_string(n);
      const Json& node = nodes[n];
      std::vector<int> in_values;
      bool ready = true;
      for (std::size_t k = 0; k < node["inputs"].size(); ++k) {
        std::string ip = p + "/inputs/" + std::to_string(k);
        lookup_decl(node["inputs"][k], ip);
        auto it = value_of.find(node["inputs"][k].get<std::string>());
        if (it == value_of.end()) {
          if (!producer.count(node["inputs"][k].get<std::string>()))
            throw UserError("variable \"" + node["inputs"][k].get<std::string>() +
                                "\" is neither an input, a constant, nor produced by a node",
                            ip);
          ready = false;
          break;
        }
        in_values.push_back(it->second);
      }
      if (!ready) continue;
      ScalarOp op = scalar_op_from_json(node["op"], p + "/op");
      std::vector<int> outs;
      try {
        if (op.num_outputs() != static_cast<int>(node["outputs"].size()))
          throw std::invalid_argument("produces " + std::to_string(op.num_outputs()) +
                                      " outputs but the node lists " +
                                      std::to_string(node["outputs"].size()));
        outs = g->add_node(op, in_values);
      } catch (const std::invalid_argument& e) {
        throw UserError(e.what(), p);
      }
      for (std::size_t k = 0; k < outs.size(); ++k) {
        std::string id = node["outputs"][k].get<std::string>();
        DType inferred = g->values()[static_cast<std::size_t>(outs[k])].dtype;
        if (decls[id].dtype != inferred)
          throw UserError("variable \"" + id + "\" is declared " +
                              std::string(dtype_name(decls[id].dtype)) + " but " +
                              std::string(op.info().name) + " gives " +
                              std::string(dtype_name(inferred)),
                          p + "/outputs/" + std::to_string(k));
        value_of[id] = outs[k];
      }
      placed[n] = true;
      --remaining;
      progress = true;
    }
    if (!progress) throw UserError("the Composite's nodes form a cycle", where + "/nodes");
  }
  const Json& outs = j["outputs"];
  if (outs.empty()) throw UserError("a Composite needs at least one output", where + "/outputs");
  for (std::size_t i = 0; i < outs.size(); ++i) {
    std::string p = where + "/outputs/" + std::to_string(i);
    lookup_decl(outs[i], p);
    auto it = value_of.find(outs[i].get<std::string>());
    if (it == value_of.end()) throw UserError("output is never computed", p);
    g->add_output(it->second);
  }
  for (const auto& id : decl_order)
    if (!value_of.count(id))
      throw UserError("variable \"" + id + "\" is neither an input, a constant, nor produced by a node",
                      decls[id].pointer);
  return g;
}

namespace {

// The scalar ops PyTensor's pprint writes as operators (scalar/basic.py assigns an
// OperatorPrinter to exactly these); every other op prints as a call, `str(op)(args)`.
std::string infix(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Add: return " + ";
    case ScalarOpId::Sub: return " - ";
    case ScalarOpId::Mul: return " * ";
    case ScalarOpId::TrueDiv: return " / ";
    case ScalarOpId::IntDiv: return " // ";
    case ScalarOpId::Mod: return " % ";
    case ScalarOpId::Pow: return " ** ";
    default: return "";
  }
}

// A float as Python/NumPy's str() prints it: the shortest digits that read back to the same
// value in its own precision, positional between 1e-4 and 1e16, else scientific ("1e+16").
template <typename T>
std::string float_str(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int max_digits = std::numeric_limits<T>::max_digits10;
  for (int p = 0; p < max_digits; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, static_cast<double>(v));
    if (static_cast<T>(std::strtod(buf, nullptr)) == v) break;
  }
  std::string text(buf);
  const std::size_t epos = text.find('e');
  const int exponent = std::atoi(text.c_str() + epos + 1);
  std::string sign = text[0] == '-' ? "-" : "";
  std::string digits;
  for (std::size_t i = sign.size(); i < epos; ++i)
    if (text[i] != '.') digits += text[i];
  const double magnitude = std::fabs(static_cast<double>(v));
  if ((magnitude != 0 && magnitude < 1e-4) || exponent >= 16) {
    std::string e = std::to_string(std::abs(exponent));
    if (e.size() < 2) e = "0" + e;
    std::string mantissa = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + e;
  }
  if (exponent < 0)
    return sign + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const auto int_len = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_len)
    return sign + digits + std::string(int_len - digits.size(), '0') + ".0";
  return sign + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

// A 0-d constant as PyTensor's pprint shows it (str of the NumPy scalar: "1.0", "5", "True").
std::string scalar_constant_str(const Array& c) {
  switch (c.dtype()) {
    case DType::Bool: return *c.data<bool>() ? "True" : "False";
    case DType::Float32: return float_str(*c.data<float>());
    case DType::Float64: return float_str(*c.data<double>());
    default: return element_to_json(c, nullptr).dump();
  }
}

}  // namespace

std::string CompositeGraph::expression() const {
  std::vector<std::string> text(values_.size());
  for (int i = 0; i < num_inputs_; ++i) text[static_cast<std::size_t>(i)] = "i" + std::to_string(i);
  for (std::size_t v = 0; v < values_.size(); ++v)
    if (values_[v].is_constant()) text[v] = scalar_constant_str(values_[v].constant);
  for (const Node& n : nodes_) {
    std::vector<std::string> args;
    for (int v : n.inputs) args.push_back(text[static_cast<std::size_t>(v)]);
    const std::string sep = infix(n.op.id());
    std::string e;
    if (n.op.id() == ScalarOpId::Neg) {
      e = "(-" + args[0] + ")";
    } else if (!sep.empty()) {
      // PyTensor parenthesises every operator application.
      e = "(";
      for (std::size_t k = 0; k < args.size(); ++k) e += (k ? sep : "") + args[k];
      e += ")";
    } else {
      e = n.op.str() + "(";
      for (std::size_t k = 0; k < args.size(); ++k) e += (k ? ", " : "") + args[k];
      e += ")";
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      text[static_cast<std::size_t>(n.outputs[k])] =
          n.outputs.size() == 1 ? e : e + "[" + std::to_string(k) + "]";
  }
  std::string out;
  for (std::size_t k = 0; k < outputs_.size(); ++k)
    out += (k ? ", " : "") + text[static_cast<std::size_t>(outputs_[k])];
  return out;
}

}  // namespace kiln
