#include "compile/bisect.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "compile/call.h"
#include "eval/evaluator.h"
#include "kiln/runtime/array_print.hpp"
#include "ops/array_util.h"

namespace kiln {

namespace {

std::string number(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Where `compiled` differs from `reference` beyond tolerance, or nothing.
std::optional<std::string> difference(const Array& compiled, const Array& reference, const BisectOptions& o) {
  if (compiled.dtype() != reference.dtype())
    return "dtype " + std::string(dtype_name(compiled.dtype())) + ", reference " + std::string(dtype_name(reference.dtype()));
  if (compiled.shape() != reference.shape())
    return "shape " + shape_str(compiled.shape()) + ", reference " + shape_str(reference.shape());
  const bool wide = compiled.dtype() == DType::Float64;
  const double rtol = o.rtol.value_or(wide ? 1e-6 : 1e-4);
  const double atol = o.atol.value_or(wide ? 1e-9 : 1e-6);
  const bool real = is_float(compiled.dtype());
  std::optional<std::string> found;
  compiled.for_each_index([&](const std::int64_t* idx) {
    if (found) return;
    bool same;
    std::string values;
    if (real) {
      const double a = element_as_double(compiled, idx), e = element_as_double(reference, idx);
      same = (std::isnan(a) && std::isnan(e)) || a == e ||
             (std::isfinite(a) && std::isfinite(e) && std::fabs(a - e) <= atol + rtol * std::fabs(e));
      values = ": compiled " + number(a) + ", reference " + number(e);
    } else {
      same = std::memcmp(compiled.element_ptr(idx), reference.element_ptr(idx), compiled.itemsize()) == 0;
    }
    if (same) return;
    std::string where;
    for (int d = 0; d < compiled.ndim(); ++d) where += (d ? ", " : "") + std::to_string(idx[d]);
    found = "at [" + where + "]" + values;
  });
  if (found && compiled.size() <= 100)
    *found += "\n  compiled:  " + format_array(compiled) + "\n  reference: " + format_array(reference);
  return found;
}

std::string node_line(const Apply& node, int output) {
  std::string s = node.op().str();
  if (node.num_outputs() > 1) s += "." + std::to_string(output);
  const Variable& v = *node.output_ptr(output);
  if (!v.name().empty()) s += " '" + v.name() + "'";
  else if (!v.file_id().empty()) s += " (id " + v.file_id() + ")";
  return s;
}

}  // namespace

BisectResult bisect(const FunctionGraph& fg, const std::vector<Array>& inputs, const BisectOptions& options) {
  // Every tensor a node computes becomes an output, in topological order.
  const std::vector<Apply*> order = fg.toposort();
  struct Exposed {
    std::size_t node;
    int output;
  };
  std::vector<Exposed> exposed;
  VarList outputs;
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int o = 0; o < order[i]->num_outputs(); ++o)
      if (order[i]->output_ptr(o)->type().is_tensor()) {
        exposed.push_back({i, o});
        outputs.push_back(fg.handle(order[i]->output_ptr(o)));
      }
  BisectResult result;
  if (outputs.empty()) return result;
  const FunctionGraph all(fg.inputs(), outputs, fg.name() + "_bisect");
  const std::vector<Array> reference = evaluate(all, inputs);
  CompileOptions compile_options = options.compile;
  compile_options.program = false;
  const std::vector<Array> compiled = call_built_library(compile(all.clone(), compile_options), inputs);
  for (std::size_t k = 0; k < exposed.size(); ++k) {
    const Apply& node = *order[exposed[k].node];
    if (k == 0 || exposed[k].node != exposed[k - 1].node) ++result.nodes_checked;
    auto diff = difference(compiled[k], reference[k], options);
    if (!diff) continue;
    BisectMismatch m;
    m.node_index = exposed[k].node;
    m.output = exposed[k].output;
    m.node_line = node_line(node, exposed[k].output);
    m.origins = origins_str(node.origins());
    m.difference = *diff;
    result.first = m;
    return result;
  }
  return result;
}

}  // namespace kiln
