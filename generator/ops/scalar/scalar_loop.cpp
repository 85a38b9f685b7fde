#include "ops/scalar/scalar_loop.h"

#include <cstring>

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/scalar/composite.h"
#include "ops/scalar/scalar_eval.h"

namespace kiln {

using Json = nlohmann::json;

ScalarOp scalar_loop_from_json(const Json& j, const std::string& where) {
  if (!j.contains("is_while") || !j["is_while"].is_boolean())
    throw UserError("a ScalarLoop needs a boolean \"is_while\"", where);
  const bool is_while = j["is_while"].get<bool>();
  Json inner = j;  // the inner graph is written as a Composite's
  inner.erase("is_while");
  inner["name"] = "Composite";
  auto graph = CompositeGraph::from_json(inner, where);
  const std::vector<DType> ins = graph->input_dtypes(), outs = graph->output_dtypes();
  const std::size_t carries = outs.size() - (is_while ? 1 : 0);
  if (is_while && outs.back() != DType::Bool)
    throw UserError("a while ScalarLoop's last output (until) must be bool, not " + std::string(dtype_name(outs.back())),
                    where + "/outputs/" + std::to_string(outs.size() - 1));
  if (carries > ins.size())
    throw UserError("a ScalarLoop has " + std::to_string(carries) + " update(s) but only " + std::to_string(ins.size()) +
                        " input(s) to carry them",
                    where + "/outputs");
  for (std::size_t k = 0; k < carries; ++k)
    if (outs[k] != ins[k])
      throw UserError("update " + std::to_string(k) + " is " + std::string(dtype_name(outs[k])) +
                          " but the value it carries (input " + std::to_string(k) + ") is " +
                          std::string(dtype_name(ins[k])),
                      where + "/outputs/" + std::to_string(k));
  return ScalarOp::scalar_loop(std::move(graph), is_while);
}

std::vector<Array> eval_scalar_loop(const ScalarOp& op, const std::vector<Array>& args, const Shape& shape) {
  const ScalarOp body = ScalarOp::composite(op.composite_graph());
  const std::size_t carries = static_cast<std::size_t>(op.loop_carries());
  const Array steps = astype(args[0], DType::Int64).contiguous();
  const std::int64_t* n = steps.data<std::int64_t>();
  std::vector<Array> inner;  // the carried values (fresh, updated in place), then the constants
  for (std::size_t k = 1; k < args.size(); ++k) inner.push_back(k <= carries ? args[k].copy() : args[k]);
  Array until = Array::empty(DType::Bool, shape);
  const std::int64_t size = until.size();
  bool* done = until.data<bool>();
  std::vector<char> active(static_cast<std::size_t>(size));
  for (std::int64_t e = 0; e < size; ++e) done[e] = true;
  // Step t runs for the elements with t < n_steps that have not stopped; the inner graph is
  // evaluated for all elements and kept where the step runs.
  for (std::int64_t t = 0;; ++t) {
    bool any = false;
    for (std::int64_t e = 0; e < size; ++e) {
      active[static_cast<std::size_t>(e)] = t < n[e] && (t == 0 || !op.loop_is_while() || !done[e]);
      any = any || active[static_cast<std::size_t>(e)];
    }
    if (!any) break;
    const std::vector<Array> next = eval_scalar_op(body, inner, shape);
    for (std::size_t k = 0; k < carries; ++k) {
      const std::size_t item = inner[k].itemsize();
      char* to = static_cast<char*>(inner[k].data());
      const char* from = static_cast<const char*>(next[k].data());
      for (std::int64_t e = 0; e < size; ++e)
        if (active[static_cast<std::size_t>(e)]) std::memcpy(to + e * item, from + e * item, item);
    }
    if (op.loop_is_while()) {
      const bool* stop = next.back().data<bool>();
      for (std::int64_t e = 0; e < size; ++e)
        if (active[static_cast<std::size_t>(e)]) done[e] = stop[e];
    }
  }
  std::vector<Array> out(inner.begin(), inner.begin() + static_cast<std::ptrdiff_t>(carries));
  if (op.loop_is_while()) out.push_back(until);
  return out;
}

}  // namespace kiln
