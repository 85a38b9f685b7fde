#include "ops/props.h"

#include "ir/error.h"
#include "util/suggest.h"

namespace kiln {

using Json = nlohmann::json;

namespace {
// Props that only describe in-place execution or input checking in PyTensor (GRAPH_FORMAT.md):
// accepted, type-checked, ignored.
enum class Kind { Bool, Object, BoolOrInt, Int, String, List };
const std::vector<std::pair<std::string, Kind>>& ignored_props() {
  static const std::vector<std::pair<std::string, Kind>> list = {
      {"inplace", Kind::Bool},           {"inplace_pattern", Kind::Object},
      {"destructive", Kind::Bool},       {"view", Kind::BoolOrInt},
      {"overwrite_a", Kind::Bool},       {"overwrite_b", Kind::Bool},
      {"check_finite", Kind::Bool},      {"upcast_discrete_output", Kind::Bool},
      {"no_zeros_in_input", Kind::Bool}, {"b_ndim", Kind::Int},
      // version 2 (PyTensor 3.x): IncSubtensor's aliasing pairs, LAPACK driver choices
      {"destroyhandler_tolerate_aliased", Kind::List}, {"driver", Kind::String},
      {"overwrite_c", Kind::Bool},
      // version 2: the inner graph of an op PyTensor 3.x defines as an OpFromGraph (Softmax,
      // AllocDiag, ...); kiln's own definition of the op stands
      {"inner", Kind::Object}};
  return list;
}
}  // namespace

PropReader::PropReader(const Json& props, std::string pointer, std::string op_name)
    : props_(props.is_null() ? Json::object() : props),
      pointer_(std::move(pointer)),
      op_name_(std::move(op_name)) {
  if (!props_.is_object()) throw UserError("props of " + op_name_ + " must be an object", pointer_);
}

bool PropReader::has(const std::string& key) const {
  return props_.contains(key) && !props_[key].is_null();
}

std::string PropReader::where(const std::string& key) const { return pointer_ + "/" + key; }

void PropReader::fail(const std::string& key, const std::string& msg) const {
  throw UserError(op_name_ + ": prop \"" + key + "\" " + msg, where(key));
}

const Json& PropReader::require(const std::string& key) {
  read_.insert(key);
  if (!props_.contains(key)) throw UserError(op_name_ + " needs the prop \"" + key + "\"", pointer_);
  return props_[key];
}

const Json& PropReader::raw(const std::string& key) {
  read_.insert(key);
  static const Json null_json;
  return props_.contains(key) ? props_[key] : null_json;
}

std::int64_t PropReader::get_int(const std::string& key) {
  const Json& v = require(key);
  if (!v.is_number_integer()) fail(key, "must be an integer, not " + v.dump());
  return v.get<std::int64_t>();
}

std::int64_t PropReader::get_int(const std::string& key, std::int64_t dflt) {
  read_.insert(key);
  if (!has(key)) return dflt;
  return get_int(key);
}

bool PropReader::get_bool(const std::string& key, bool dflt) {
  read_.insert(key);
  if (!has(key)) return dflt;
  const Json& v = props_[key];
  if (!v.is_boolean()) fail(key, "must be true or false, not " + v.dump());
  return v.get<bool>();
}

std::string PropReader::get_string(const std::string& key) {
  const Json& v = require(key);
  if (!v.is_string()) fail(key, "must be a string, not " + v.dump());
  return v.get<std::string>();
}

DType PropReader::get_dtype(const std::string& key) {
  std::string s = get_string(key);
  auto dt = dtype_from_name(s);
  if (!dt) fail(key, "is not a known dtype: \"" + s + "\"");
  return *dt;
}

std::optional<DType> PropReader::get_optional_dtype(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_dtype(key);
}

std::optional<std::vector<std::int64_t>> PropReader::get_axes(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  const Json& v = props_[key];
  if (v.is_number_integer()) return std::vector<std::int64_t>{v.get<std::int64_t>()};
  if (!v.is_array()) fail(key, "must be null, an integer or a list of integers, not " + v.dump());
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer())
      throw UserError(op_name_ + ": axis entries must be integers", where(key) + "/" + std::to_string(i));
    out.push_back(v[i].get<std::int64_t>());
  }
  return out;
}

std::vector<std::int64_t> PropReader::get_int_list(const std::string& key) {
  const Json& v = require(key);
  if (!v.is_array()) fail(key, "must be a list of integers, not " + v.dump());
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer())
      throw UserError(op_name_ + ": entries must be integers", where(key) + "/" + std::to_string(i));
    out.push_back(v[i].get<std::int64_t>());
  }
  return out;
}

std::shared_ptr<const FunctionGraph> PropReader::get_inner_graph(const std::string& key) {
  const Json& g = require(key);
  if (!inner_loader_) fail(key, "(an inner graph) cannot be read here");
  if (!g.is_object()) fail(key, "must be a graph object with variables, nodes, inputs and outputs");
  return inner_loader_(g, where(key));
}

void PropReader::finish() {
  for (auto it = props_.begin(); it != props_.end(); ++it) {
    const std::string& key = it.key();
    if (read_.count(key)) continue;
    const Json& v = it.value();
    if (key == "on_error") {
      if (v != "raise") fail(key, "is only accepted as \"raise\", not " + v.dump());
      continue;
    }
    bool known = false;
    for (const auto& [name, kind] : ignored_props()) {
      if (name != key) continue;
      known = true;
      bool ok = v.is_null() || (kind == Kind::Bool && v.is_boolean()) ||
                (kind == Kind::Object && v.is_object()) ||
                (kind == Kind::BoolOrInt && (v.is_boolean() || v.is_number_integer())) ||
                (kind == Kind::Int && v.is_number_integer()) ||
                (kind == Kind::String && v.is_string()) || (kind == Kind::List && v.is_array());
      if (!ok) fail(key, "has the wrong type: " + v.dump());
    }
    if (!known) {
      std::vector<std::string> names(read_.begin(), read_.end());
      for (const auto& [name, kind] : ignored_props()) names.emplace_back(name);
      throw UserError("unknown prop \"" + key + "\" for op " + op_name_ + did_you_mean(key, names), where(key));
    }
  }
}

}  // namespace kiln
