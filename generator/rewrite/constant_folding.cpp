#include "rewrite/constant_folding.h"

#include <algorithm>
#include <stdexcept>

#include "ir/error.h"
#include "ops/random.h"

namespace kiln {

namespace {
// Folding may not make constants grow beyond this many elements (or the inputs' total).
constexpr std::int64_t kMaxFoldedGrowth = 1 << 16;
}  // namespace

NodeRewrite constant_folding_rule() {
  NodeRewrite r;
  r.name = "constant_folding";
  r.tags = {"canonicalize", "stabilize", "specialize", "constant_folding"};
  r.exact_shapes = true;
  r.apply = [](const FunctionGraph&, const Apply& node) -> std::optional<VarList> {
    if (is_impure(node.op())) return std::nullopt;  // a draw happens at run time, every time
    std::int64_t input_elements = 0;
    std::vector<Array> args;
    for (const auto& in : node.inputs()) {
      if (!in->is_constant()) return std::nullopt;
      args.push_back(in->value());
      input_elements += in->value().size();
    }
    if (!node.op().do_constant_folding(node)) return std::nullopt;
    // A node without inputs (none exists today) would have nothing to fold from.
    if (node.num_inputs() == 0) return std::nullopt;
    // An output whose static size is already too large is not computed at all (Eye(10^5)
    // would allocate 80 GB before the check below); so is one no array can hold.
    for (int o = 0; o < node.num_outputs(); ++o) {
      std::int64_t n = 1;
      for (std::int64_t d : node.output_ptr(o)->type().shape)
        if (d != kUnknownLength && __builtin_mul_overflow(n, d, &n)) return std::nullopt;
      if (n > std::max(kMaxFoldedGrowth, input_elements)) return std::nullopt;
    }
    std::vector<Array> results(static_cast<std::size_t>(node.num_outputs()));
    try {
      node.op().perform(node, args, results);
    } catch (const UserError&) {
      return std::nullopt;  // a run-time error stays in the graph and fails at run time
    } catch (const std::bad_alloc&) {
      return std::nullopt;
    } catch (const std::length_error&) {
      return std::nullopt;  // no array has that size: the run reports it
    }
    VarList out;
    for (int o = 0; o < node.num_outputs(); ++o) {
      const Array& a = results[static_cast<std::size_t>(o)];
      if (!a.defined() || !node.output_ptr(o)->type().accepts(a)) return std::nullopt;
      if (a.size() > std::max(kMaxFoldedGrowth, input_elements)) return std::nullopt;
      Var c = make_constant(a, {}, node.output_ptr(o)->type().kind);
      out.push_back(c);
    }
    return out;
  };
  return r;
}

}  // namespace kiln
