// Elemwise: one loop over the broadcast shape computing the scalar op (or a whole Composite)
// per element, with a contiguous fast path the compiler vectorises and a strided general path.
#include <set>

#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "ops/scalar/composite.h"
#include "ops/elemwise.h"

namespace kiln {
namespace {

/// Whether `op` computes with cheap inline arithmetic only (operators, compares, selects, casts):
/// nothing a vectorised loop runs several times faster — no math-library call, no floating-point
/// division or square root (radon's gradient, two divisions an element: 13 % faster vectorised).
bool cheap_arithmetic_only(const ScalarOp& op) {
  switch (op.id()) {
    case ScalarOpId::Composite:
      for (const auto& inner : op.composite_graph()->nodes())
        if (!cheap_arithmetic_only(inner.op)) return false;
      return true;
    case ScalarOpId::Neg: case ScalarOpId::Abs: case ScalarOpId::Sgn: case ScalarOpId::Sqr:
    case ScalarOpId::Floor: case ScalarOpId::Ceil: case ScalarOpId::Trunc: case ScalarOpId::IsNan:
    case ScalarOpId::IsInf: case ScalarOpId::Invert: case ScalarOpId::Identity: case ScalarOpId::Add:
    case ScalarOpId::Sub: case ScalarOpId::Mul: case ScalarOpId::IntDiv: case ScalarOpId::Mod:
    case ScalarOpId::Maximum: case ScalarOpId::Minimum: case ScalarOpId::Eq: case ScalarOpId::Neq:
    case ScalarOpId::Lt: case ScalarOpId::Le: case ScalarOpId::Gt: case ScalarOpId::Ge:
    case ScalarOpId::And: case ScalarOpId::Or: case ScalarOpId::Xor: case ScalarOpId::Second:
    case ScalarOpId::Switch: case ScalarOpId::Clip: case ScalarOpId::Cast:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string emit_elemwise(const NodeEmitContext& c) {
  const auto& op = static_cast<const Elemwise&>(c.node().op());
  const Apply& node = c.node();
  const int nd = node.output_ptr(0)->ndim();
  const int n_in = node.num_inputs();
  TemplateData data = c.base_data();
  data.set("ndim", std::to_string(nd));
  data.set("ndim_or_1", std::to_string(nd > 0 ? nd : 1));
  data.set("n_in", std::to_string(n_in));
  data.set("n_operands", std::to_string(n_in + node.num_outputs()));
  // An in-place node writes output j over input k: those two pointers may be equal, so they get
  // no restrict promise; every other operand is a distinct buffer and keeps it. The fast loop
  // reads and writes element e only, so equal pointers carry no dependence between iterations:
  // `omp simd` says so to the vectoriser, which otherwise gives up on the unprovable aliasing.
  std::set<int> aliased_inputs, aliased_outputs;
  for (const auto& [out, ins] : node.op().destroy_map()) {
    aliased_outputs.insert(out);
    aliased_inputs.insert(ins.begin(), ins.end());
  }
  auto restrict_for = [](bool aliased) { return aliased ? "" : "__restrict "; };

  // Output shape: per dimension, the common length of the operands that are not statically 1.
  TemplateData dims{TemplateData::type::list};
  for (int d = 0; d < nd; ++d) {
    std::string lengths, bcast;
    for (int k = 0; k < n_in; ++k) {
      lengths += (k ? ", " : "") + c.in(k) + ".shape[" + std::to_string(d) + "]";
      bcast += std::string(k ? ", " : "") + (c.in_var(k).type().broadcastable(d) ? "true" : "false");
    }
    TemplateData dim;
    dim.set("d", std::to_string(d));
    dim.set("lengths", lengths);
    dim.set("broadcastable", bcast);
    dims.push_back(dim);
  }
  data.set("dims", dims);

  // Operands and the fast-path condition: an input takes part in the flat loop when it is
  // statically a single element, or contiguous with no broadcast dimension longer than 1.
  TemplateData inputs{TemplateData::type::list}, static_bcast{TemplateData::type::list};
  TemplateData gathers{TemplateData::type::list}, loop_reads{TemplateData::type::list};
  bool has_gathers = false, narrow_gather = false;
  // A flat loop that gathers and does only cheap arithmetic is left scalar: with AVX2 gathers,
  // the branch-free index check costs more than the vector arithmetic gains (see indexing.hpp).
  // In place too: a scalar loop reads element e before it writes it.
  const bool scalar_gather_loop = cheap_arithmetic_only(op.scalar_op());
  std::vector<std::string> args;
  std::vector<DType> arg_dtypes;
  std::string fast = "true";
  for (int k = 0; k < n_in; ++k) {
    const Variable& v = c.in_var(k);
    bool single = true;
    for (int d = 0; d < nd; ++d) single = single && v.type().broadcastable(d);
    TemplateData in;
    in.set("k", std::to_string(k));
    in.set("name", c.in(k));
    in.set("ctype", ctype(v.dtype()));
    in.set("restrict", restrict_for(aliased_inputs.count(k) > 0));
    const std::string p = "p" + std::to_string(k), fast_index = single ? "0" : "e";
    bool hoisted = false;  // read once before the flat loop (below)
    if (const Apply* g = c.fused_gather(k)) {
      // v = x[idx] read in the loop: element t of v is x[idx[t]] (gather_fusion.h).
      const std::string x = c.name_of(*g->input(0)), idx = c.name_of(*g->input(1));
      const std::string decl = "const " + ctype(v.dtype()) + "* __restrict " + p + " = " + x + ".data; const " +
                               ctype(g->input(1)->dtype()) + "* __restrict " + p + "i = " + idx +
                               ".data; const int64_t " + p + "xs = " + x + ".strides[0], " + p + "is = " + idx +
                               ".strides[0], " + p + "n = " + x + ".shape[0];";
      in.set("decl", decl);
      in.set("fast_decl", decl);
      auto read = [&](const std::string& t) {
        return p + "[kg::gather_index(" + p + "i[(" + t + ") * " + p + "is], " + p + "n, bad) * " + p + "xs]";
      };
      // The flat loop takes contiguous x and idx only and reads them without stride products:
      // AVX2 has no 64-bit vector multiply, and with one the vectoriser gives up the gather.
      // A loop of cheap arithmetic stays scalar and checks with a branch (gather_index_scalar).
      in.set("fast_read", p + (scalar_gather_loop ? "[kg::gather_index_scalar(" : "[kg::gather_index(") + p + "i[" +
                              fast_index + "], " + p + "n, bad)]");
      in.set("strided_read", read("off[" + std::to_string(k) + "]"));
      fast += " && " + x + ".is_contiguous() && " + idx + ".is_contiguous()";
      TemplateData item;
      item.set("name", c.in(k));
      item.set("x", x);
      item.set("idx", idx);
      gathers.push_back(item);
      has_gathers = true;
      narrow_gather = narrow_gather || dtype_size(v.dtype()) < dtype_size(g->input(1)->dtype());
    } else {
      std::string decl = "const " + ctype(v.dtype()) + "* " + restrict_for(aliased_inputs.count(k) > 0) + p +
                         " = " + c.in(k) + ".data;";
      // In place, a single element is read once before the flat loop: the output has no
      // restrict promise there, so the compiler must reload it after every store (radon's
      // gradient: four reloads an element, and a select on one kept the loop from vectorising).
      // No output can overlap it: the one an in-place output replaces has the output's shape.
      hoisted = single && !aliased_outputs.empty();
      in.set("decl", decl);
      in.set("fast_decl", hoisted ? decl + " const " + ctype(v.dtype()) + " i" + std::to_string(k) + " = " + p + "[0];"
                                  : decl);
      in.set("fast_read", p + "[" + fast_index + "]");
      in.set("strided_read", p + "[off[" + std::to_string(k) + "]]");
    }
    if (!hoisted) loop_reads.push_back(in);
    inputs.push_back(in);
    if (!single) {
      fast += " && " + c.in(k) + ".is_contiguous()";
      for (int d = 0; d < nd; ++d)
        if (v.type().broadcastable(d)) fast += " && " + c.out(0) + ".shape[" + std::to_string(d) + "] == 1";
    }
    for (int d = 0; d < nd; ++d) {
      if (!v.type().broadcastable(d)) continue;
      TemplateData sb;
      sb.set("k", std::to_string(k));
      sb.set("d", std::to_string(d));
      static_bcast.push_back(sb);
    }
    args.push_back("i" + std::to_string(k));
    arg_dtypes.push_back(v.dtype());
  }
  data.set("inputs", inputs);
  data.set("loop_reads", loop_reads);
  data.set("has_gathers", has_gathers);
  // The flat loop's pragma. A gathering loop of cheap arithmetic (scalar_gather_loop): unrolled
  // four times, which W10 float32 measured at 1.2x the hand loop without and 1.0-1.1x with.
  // `omp simd`: in place (above), and with a gather of values narrower than their indices
  // (float32 by int64) in a loop that is not cheap arithmetic, whose mixed widths GCC's cost model
  // declines. For equal widths (float64 by int64) GCC's choice stands. Otherwise `ivdep`, which
  // says only that iterations do not depend on each other (true as above) and leaves math calls
  // and the cost model alone: GCC does not see the __restrict locals through the lambda's
  // captures, and would version the loop on run-time alias checks.
  if (has_gathers && scalar_gather_loop)
    data.set("simd_pragma", std::string("#pragma GCC unroll 4"));
  else if (narrow_gather || !aliased_outputs.empty())
    data.set("simd_pragma", std::string("#pragma omp simd") + (has_gathers ? " reduction(|:bad)" : ""));
  else
    data.set("simd_pragma", std::string("#pragma GCC ivdep"));
  // The flat loop is a function of its own (noinline), which kg::parallel_for's single-thread
  // call and its threads both call: inlined into a large graph function, GCC left that copy
  // unanalysed and scalar (W11's pushed-out residual, beside the Scan loop). Not where the output
  // is statically one element (a Scan step's row of length 1): a call per step costs more than the loop.
  bool single_output = true;
  for (int d = 0; d < nd; ++d) single_output = single_output && node.output_ptr(0)->type().broadcastable(d);
  data.set("loop_attribute", std::string(single_output ? "" : " __attribute__((noinline))"));
  data.set("gathers", gathers);
  data.set("static_broadcast", static_bcast);
  data.set("fast_path", fast);
  // Every operand statically a single element or contiguous: the flat loop always applies, and
  // the general loop would be dead code that still costs the compiler its parse.
  data.set("general_path", fast != "true");

  int counter = 0;
  ScalarCode code = emit_scalar_code(op.scalar_op(), args, arg_dtypes, "t", counter);
  data.set("body", indent_lines(code.statements, "      "));
  // A result that is statically one element (0-d, or every length statically 1, so every input
  // is one element too) is a plain block, not the two loops. The shape arithmetic of most graphs
  // and a PyMC model's scalar parameters are such nodes; the loops' code (vectorised for an
  // unknown length) costs compile time for nothing there.
  data.set("scalar", single_output && !has_gathers);
  data.set("scalar_body", indent_lines(code.statements, "  "));

  TemplateData outputs{TemplateData::type::list}, extra{TemplateData::type::list};
  for (int k = 0; k < node.num_outputs(); ++k) {
    TemplateData o;
    o.set("k", std::to_string(k));
    o.set("name", c.out(k));
    o.set("ctype", ctype(node.output_ptr(k)->dtype()));
    o.set("restrict", restrict_for(aliased_outputs.count(k) > 0));
    o.set("operand", std::to_string(n_in + k));
    o.set("alloc", c.alloc(k));
    o.set("result", code.results[static_cast<std::size_t>(k)]);
    outputs.push_back(o);
    if (k > 0) {
      TemplateData e;
      e.set("name", c.out(k));
      e.set("ndim", std::to_string(nd));
      extra.push_back(e);
    }
  }
  data.set("outputs", outputs);
  data.set("extra_outputs", extra);
  return render_template("templates/cpp/ops/elemwise.mustache", data);
}

}  // namespace kiln
