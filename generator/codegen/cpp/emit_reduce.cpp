// Reductions: CAReduce (Sum, Prod, ProdWithoutZeros, Max, Min, All, Any and the generic
// CAReduce, including fused ones whose scalar op is a Composite `acc, x -> acc'`) and Argmax
// (templates/cpp/ops/reduce*.mustache). The generated code folds exactly as CAReduce::perform
// does (same step, identity, accumulator and output dtypes), except that a fold which may be
// split is cut into independent runs for speed: exact for integers and max/min, a rounding
// difference at most for float sums and products.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/reduce_fold.h"
#include "ir/error.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "util/sha256.h"

namespace kiln {

namespace {

// The kept dimensions of an input of rank `ndim` (output dimension i is input dimension d), and
// the reduced ones.
void split_axes(const ReduceAxes& axes, int ndim, TemplateData& data, std::vector<int>& reduced) {
  reduced = reduced_axes_list(axes, ndim);
  TemplateData kept = new_list();
  for (int d = 0, i = 0; d < ndim; ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    TemplateData item;
    item.set("i", str(i++));
    item.set("d", str(d));
    kept.push_back(item);
  }
  std::string list;
  for (int d : reduced) list += (list.empty() ? "" : ", ") + str(d);
  data.set("kept", kept);
  data.set("axes", list.empty() ? "0" : list);  // a 0-d input: an unused placeholder
  data.set("ndim", str(ndim));
  data.set("nred", str(static_cast<int>(reduced.size())));
}

// One run-time check per reduced axis that it is not empty, failing with `message(d)`.
template <typename Message>
TemplateData empty_checks(const std::vector<int>& reduced, Message message) {
  TemplateData checks = new_list();
  for (int d : reduced) {
    TemplateData item;
    item.set("d", str(d));
    item.set("message", c_string_literal(message(d)));
    checks.push_back(item);
  }
  return checks;
}

// Dimensions [from, to) as template items.
TemplateData dim_range(int from, int to) {
  TemplateData dims = new_list();
  for (int d = from; d < to; ++d) {
    TemplateData item;
    item.set("d", str(d));
    dims.push_back(item);
  }
  return dims;
}

}  // namespace

NodeCode emit_careduce(const NodeEmitContext& c) {
  const auto& op = static_cast<const CAReduce&>(c.node().op());
  const DType in = c.in_var(0).dtype();
  const int ndim = c.in_var(0).ndim();
  ReduceDTypes dt = op.dtypes_for(in);
  // A float16 accumulator folds in float32 and is rounded once at the end (as perform).
  const DType declared_acc = dt.acc;
  dt.acc = arithmetic_dtype(dt.acc);
  TemplateData data = c.base_data();
  std::vector<int> reduced;
  split_axes(op.axis(), ndim, data, reduced);
  data.set("T", ctype(in));
  data.set("A", ctype(dt.acc));
  data.set("O", ctype(dt.out));

  if (op.kind() == ReduceKind::Max || op.kind() == ReduceKind::Min) {
    data.set("empty_checks", empty_checks(reduced, [&](int d) { return op.empty_axis_message(d); }));
  }

  const ScalarOp& scalar = op.scalar_op();
  const std::vector<DType> acc2{dt.acc, dt.acc};
  bool combinable = true;
  if (op.kind() == ReduceKind::ProdWithoutZeros) {
    // Zeros are skipped and 0 stands for "no factor yet"; a product that wraps to 0 restarts
    // the fold, so only the in-order fold gives perform's result.
    data.set("init", "A(0)");
    data.set("step",
             "    const A v = kiln_scalar::convert<A>(x);\n"
             "    return a == A(0) ? v : v == A(0) ? a : kiln_scalar::wrap_mul(a, v);");
    combinable = false;
  } else if (scalar.id() == ScalarOpId::Composite) {
    const CompositeFold fold = analyse_composite_fold(*scalar.composite_graph());
    if (!fold.found) throw InternalError("`" + op.str() + "` has no accumulating operation");
    data.set("init", fold_identity(fold.op, dt.acc));
    data.set("step", scalar_return(scalar, {"a", "x"}, {declared_acc, in}));
    combinable = fold.splittable;
    if (combinable) data.set("combine", scalar_return(ScalarOp(fold.op), {"a", "b"}, acc2));
  } else {
    // Elements are converted to the accumulator dtype first, as perform does.
    data.set("init", fold_identity(scalar.id(), dt.acc));
    data.set("step", scalar_return(scalar, {"a", "v"}, acc2, "const A v = kiln_scalar::convert<A>(x);\n"));
    data.set("combine", scalar_return(scalar, {"a", "b"}, acc2));
  }
  data.set("combinable", combinable);

  // Reduced axes that are one run followed by kept ones: a C-contiguous input has rows of
  // outputs to fold together.
  const int nred = static_cast<int>(reduced.size());
  const bool run = nred > 0 && reduced.back() - reduced.front() + 1 == nred;
  if (run && reduced.back() < ndim - 1) {
    TemplateData column;
    column.set("pre_dims", dim_range(0, reduced.front()));
    column.set("post_dims", dim_range(reduced.back() + 1, ndim));
    data.set("column", column);
  }
  data.set("general", nred > 0);
  data.set("outer", str(nred - 1));
  data.set("outer_or_1", str(std::max(nred - 1, 1)));
  // The fold is a file-scope function named after its text: nodes with the same fold (a
  // model's several sums of a vector of doubles) share one copy, compiled once.
  data.set("x_type", tensor_type(c.in_var(0)));
  data.set("y_type", tensor_type(c.out_var(0)));
  data.set("fold", "FOLD");
  const std::string text = render_template("templates/cpp/ops/reduce_fold.mustache", data);
  const std::string name = c.kernel_prefix() + "_fold_" + sha256_hex(text).substr(0, 12);
  data.set("fold", name);
  NodeCode code(render_template("templates/cpp/ops/reduce.mustache", data));
  code.shared = render_template("templates/cpp/ops/reduce_fold.mustache", data);
  return code;
}

std::string emit_argmax(const NodeEmitContext& c) {
  const auto& op = static_cast<const Argmax&>(c.node().op());
  const DType in = c.in_var(0).dtype();
  TemplateData data = c.base_data();
  std::vector<int> reduced;
  split_axes(op.axis(), c.in_var(0).ndim(), data, reduced);
  data.set("T", ctype(in));
  data.set("is_float", is_float(in));
  data.set("empty_checks", empty_checks(reduced, [](int d) {
             return "Argmax: cannot take the argmax over axis " + str(d) + ", which has length 0";
           }));
  data.set("general", !reduced.empty());
  return render_template("templates/cpp/ops/reduce_argmax.mustache", data);
}

}  // namespace kiln
