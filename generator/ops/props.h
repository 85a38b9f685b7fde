// Reading an op's props from a graph file: typed getters that name the JSON pointer of a bad
// prop, and a final check that refuses unknown props (while accepting and ignoring the
// in-place/check props GRAPH_FORMAT.md lists).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/type.h"

namespace kiln {

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

  /// Refuses every prop that was not read and is not one of the accepted-and-ignored ones.
  void finish();

 private:
  const nlohmann::json& require(const std::string& key);
  nlohmann::json props_;
  std::string pointer_;
  std::string op_name_;
  std::set<std::string> read_;
};

}  // namespace kiln
