// GraphBuilder: declare inputs, build expressions with the numpy-like API, name the outputs,
// get a FunctionGraph:
//
//   GraphBuilder g("log1p_example");
//   auto x = g.input("x", f64, {-1});          // -1: length known only at run time
//   g.output(log(1 + x), "y");
//   FunctionGraph fg = g.build();
#pragma once

#include <string>
#include <vector>

#include "ir/fgraph.h"

namespace kiln {

inline constexpr DType boolean = DType::Bool;
inline constexpr DType i8 = DType::Int8;
inline constexpr DType i16 = DType::Int16;
inline constexpr DType i32 = DType::Int32;
inline constexpr DType i64 = DType::Int64;
inline constexpr DType u8 = DType::UInt8;
inline constexpr DType u16 = DType::UInt16;
inline constexpr DType u32 = DType::UInt32;
inline constexpr DType u64 = DType::UInt64;
inline constexpr DType f32 = DType::Float32;
inline constexpr DType f64 = DType::Float64;

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph") : name_(std::move(name)) {}

  /// A new graph input; shape entries are lengths or -1 (unknown until run time).
  Var input(const std::string& name, DType dtype, const Shape& shape);
  /// Marks `v` as a graph output; `name` (optional) names it in the graph and the ABI.
  void output(const Var& v, const std::string& name = "");
  /// The graph between the declared inputs and outputs.
  FunctionGraph build() const;

 private:
  std::string name_;
  VarList inputs_;
  VarList outputs_;
  std::vector<std::string> output_names_;
};

}  // namespace kiln
