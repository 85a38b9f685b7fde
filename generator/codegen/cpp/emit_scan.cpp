// Scan: the step function (the inner graph, emitted once as a function of its own by
// codegen/source.cpp) called from a loop over the steps, on rows of buffers kept in one scratch
// area of the context (templates/cpp/ops/control_scan.mustache, templates/cpp/prologue/scan.hpp).
// Semantics are Scan.perform's, as the reference evaluator runs them (ops/scan_perform.cpp).
#include <algorithm>
#include <map>

#include "codegen/c_types.h"
#include "codegen/cpp/emit_control_flow.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/render.h"
#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/scan.h"

namespace kiln {

namespace {

// The C++ type of a host (kg::Tensor) or device (kg::DTensor) tensor of `v`'s dtype and `rank`.
std::string scan_tensor_type(const std::string& tensor_class, const Variable& v, int rank) {
  return tensor_class + "<" + ctype(v.dtype()) + ", " + std::to_string(rank) + ">";
}

// What every buffer (output k of the node) tells the template: its types, rank, output.
TemplateData buffer_fields(const NodeEmitContext& c, const ScanInfo& info, int k, const std::string& tensor_class) {
  const Variable& out = c.out_var(k);
  TemplateData item;
  item.set("k", std::to_string(k));
  item.set("type", scan_tensor_type(tensor_class, out, out.ndim()));
  item.set("rowtype", scan_tensor_type(tensor_class, out, out.ndim() - 1));
  item.set("ndim", std::to_string(out.ndim()));
  item.set("dl", dl_dtype_literal(out.dtype()));
  item.set("out", c.out(k));
  item.set("alloc", c.alloc(k));
  item.set("neg_min", std::to_string(-info.min_tap(k)));
  return item;
}

// One tap or nit-sot buffer (output k of the node).
TemplateData buffer_item(const NodeEmitContext& c, const ScanInfo& info, int k, const std::string& tensor_class) {
  const Variable& out = c.out_var(k);
  TemplateData item = buffer_fields(c, info, k, tensor_class);
  item.set("ctype", ctype(out.dtype()));
  item.set("rowdim", std::to_string(out.ndim() - 1));
  item.set("oidx", std::to_string(info.inner_output_of(k)));
  const bool tap = k < info.n_tap_outs();
  if (tap) {
    TemplateData t;
    const int input = info.tap_buffers_begin() + k;
    t.set("in", c.in(input));
    t.set("input_index", std::to_string(input));
    t.set("need", std::to_string(std::max<std::int64_t>(1, -info.min_tap(k))));
    t.set("min_tap", std::to_string(info.min_tap(k)));
    TemplateData taps{TemplateData::type::list};
    std::string alias;
    for (std::size_t j = 0; j < info.taps(k).size(); ++j) {
      const std::int64_t tap_value = info.taps(k)[j];
      TemplateData one;
      one.set("j", std::to_string(j));
      one.set("tap", std::to_string(tap_value));
      one.set("iidx", std::to_string(info.inner_tap_input(k, static_cast<int>(j))));
      taps.push_back(one);
      alias += (alias.empty() ? "" : " || ") + std::string("kg::scan::wrap(") + std::to_string(tap_value) + ", store" +
               std::to_string(k) + ") == 0";
    }
    t.set("taps", taps);
    t.set("alias", alias);
    TemplateData list{TemplateData::type::list};
    list.push_back(t);
    item.set("tap", list);
  }
  return item;
}

// The mit-mot buffers (PyTensor's backward scans): buffer k is read at rows pos + tap of its
// input taps (circularly, as a tap buffer) and written at rows pos + tap of its output taps,
// which must lie inside it. Every written row goes through a spare row of its own first (an
// output tap usually is one of the rows the same step reads), copied in after the step.
TemplateData mit_mot_items(const NodeEmitContext& c, const ScanInfo& info, const std::string& tensor_class) {
  TemplateData items{TemplateData::type::list};
  int oidx = 0;  // the mit-mot outputs come first among the step's outputs, in this order
  for (int k = 0; k < info.n_mit_mot(); ++k) {
    TemplateData item = buffer_fields(c, info, k, tensor_class);
    item.set("in", c.in(info.tap_buffers_begin() + k));
    item.set("input_index", std::to_string(info.tap_buffers_begin() + k));
    TemplateData taps{TemplateData::type::list};
    for (std::size_t j = 0; j < info.taps(k).size(); ++j) {
      TemplateData one;
      one.set("j", std::to_string(j));
      one.set("tap", std::to_string(info.taps(k)[j]));
      one.set("iidx", std::to_string(info.inner_tap_input(k, static_cast<int>(j))));
      taps.push_back(one);
    }
    item.set("taps", taps);
    TemplateData outs{TemplateData::type::list};
    const ScanInfo::Taps& written = info.mit_mot_out_slices[static_cast<std::size_t>(k)];
    for (std::size_t o = 0; o < written.size(); ++o) {
      TemplateData one;
      one.set("o", std::to_string(o));
      one.set("otap", std::to_string(written[o]));
      one.set("oidx", std::to_string(oidx++));
      outs.push_back(one);
    }
    item.set("outs", outs);
    items.push_back(item);
  }
  return items;
}

// Steps after the first as straight-line scalar code in the loop, when every value of the inner
// graph is 0-d and every node an Elemwise (a scalar recurrence: AR filters, running sums,
// Newton iterations). Calling the step function through DLTensors costs some 400 instructions a
// step, tens of times the arithmetic of such a recurrence (bench/ W11). Step 0 still calls the
// step function, which checks the rows' types. Every value is read into a local before any is
// written, so a step that overwrites a row it reads needs no copy; non-sequences are read once,
// and a tap of -1 is carried in a local from the step that wrote it, so the recurrence does
// not go through memory. Empty `body` when not applicable.
struct InlineStep {
  std::string before;  ///< statements before the loop over steps 1..n-1
  std::string body;    ///< one step, inside that loop
};

InlineStep inline_scalar_step(const NodeEmitContext& c, const Scan& op, const ScanInfo& info) {
  const FunctionGraph& inner = op.inner_graph();
  if (info.n_untraced_sit_sot > 0 || info.n_mit_mot() > 0) return {};
  auto scalar = [](const Variable& v) { return v.ndim() == 0 && v.type().kind == TypeKind::Tensor; };
  for (const Var& v : inner.inputs())
    if (!scalar(*v)) return {};
  for (const Var& v : inner.outputs())
    if (!scalar(*v)) return {};
  const std::vector<Apply*> nodes = inner.toposort();
  for (const Apply* n : nodes) {
    if (!dynamic_cast<const Elemwise*>(&n->op())) return {};
    for (const Var& v : n->inputs())
      if (!scalar(*v)) return {};
    for (const Var& v : n->outputs())
      if (!scalar(*v)) return {};
  }
  InlineStep step;
  std::string& code = step.body;
  std::map<const Variable*, std::string> expr;
  auto input = [&](int iidx) -> const Variable& { return *inner.inputs()[static_cast<std::size_t>(iidx)]; };
  auto read = [&](int iidx, const std::string& from) {
    const std::string name = "step_in" + std::to_string(iidx);
    code += "const " + ctype(input(iidx).dtype()) + " " + name + " = " + from + ";\n";
    expr[&input(iidx)] = name;
  };
  for (int s = 0; s < info.n_seqs; ++s) {
    const std::string seq = c.in(info.seqs_begin() + s);
    read(s, seq + ".data[i * " + seq + ".strides[0]]");
  }
  for (int k = 0; k < info.n_tap_outs(); ++k) {
    const std::string kk = std::to_string(k), buf = "buf" + kk;
    for (std::size_t j = 0; j < info.taps(k).size(); ++j) {
      const std::int64_t tap = info.taps(k)[j];
      const int iidx = info.inner_tap_input(k, static_cast<int>(j));
      if (tap == -1) {  // step 0 wrote it; each step then sets it (below)
        step.before += ctype(input(iidx).dtype()) + " step_carry" + kk + " = " + buf +
                       ".data[kg::scan::wrap_once(pos" + kk + " - 1, store" + kk + ") * " + buf + ".strides[0]];\n";
        read(iidx, "step_carry" + kk);
      } else {
        read(iidx, buf + ".data[kg::scan::wrap_once(pos" + kk + " + (" + std::to_string(tap) + "), store" + kk +
                       ") * " + buf + ".strides[0]]");
      }
    }
  }
  for (int j = 0; j < info.n_non_seqs; ++j) {
    const int iidx = info.inner_non_seqs_begin() + j;
    const std::string name = "step_in" + std::to_string(iidx);
    step.before += "const " + ctype(input(iidx).dtype()) + " " + name + " = " + c.in(info.non_seqs_begin() + j) +
                   ".data[0];\n";
    expr[&input(iidx)] = name;
  }
  auto value_of = [&](const Variable& v) -> std::string {
    if (v.is_constant()) return scalar_literal(v.value());
    auto it = expr.find(&v);
    if (it == expr.end()) throw InternalError("Scan inline step: a value is read before it is computed");
    return it->second;
  };
  int counter = 0, value_counter = 0;
  for (const Apply* n : nodes) {
    std::vector<std::string> args;
    std::vector<DType> dtypes;
    for (const Var& v : n->inputs()) {
      args.push_back(value_of(*v));
      dtypes.push_back(v->dtype());
    }
    const ScalarCode sc =
        emit_scalar_code(static_cast<const Elemwise&>(n->op()).scalar_op(), args, dtypes, "step_t", counter);
    code += sc.statements;
    if (!code.empty() && code.back() != '\n') code += '\n';
    for (int o = 0; o < n->num_outputs(); ++o) {
      const Variable& out = *n->outputs()[static_cast<std::size_t>(o)];
      const std::string name = "step_v" + std::to_string(value_counter++);
      code += "const " + ctype(out.dtype()) + " " + name + " = " + sc.results[static_cast<std::size_t>(o)] + ";\n";
      expr[&out] = name;
    }
  }
  for (int k = 0; k < info.untraced_outs_begin(); ++k) {
    const std::string kk = std::to_string(k), buf = "buf" + kk;
    const std::string value = value_of(*inner.outputs()[static_cast<std::size_t>(info.inner_output_of(k))]);
    code += buf + ".data[pos" + kk + " * " + buf + ".strides[0]] = " + value + ";\n";
    if (k < info.n_tap_outs() && std::count(info.taps(k).begin(), info.taps(k).end(), -1) > 0)
      code += "step_carry" + kk + " = " + value + ";\n";
  }
  if (info.as_while) code += "go_on = " + value_of(*inner.outputs().back()) + " == 0;\n";
  // Without their last newline: the template puts each on lines of its own.
  auto lines = [](const std::string& text, const std::string& pad) {
    std::string out = indent_lines(text, pad);
    if (!out.empty()) out.pop_back();
    return out;
  };
  step.before = lines(step.before, "      ");
  step.body = lines(code, "          ");
  return step;
}

}  // namespace

TemplateData scan_data(const NodeEmitContext& c, const std::string& tensor_class, const std::string& step_fn) {
  const auto& op = static_cast<const Scan&>(c.node().op());
  const ScanInfo& info = op.info();
  TemplateData data = c.base_data();
  data.set("n_steps", c.in(0));
  data.set("step_fn", step_fn);
  data.set("bytes_type", tensor_class + "<unsigned char, 1>");
  data.set("slot", std::to_string(c.scratch_slot()));
  data.set("n_in", std::to_string(std::max(1, info.n_inner_inputs())));
  data.set("n_out", std::to_string(std::max(1, info.n_inner_outputs())));
  TemplateData seqs{TemplateData::type::list};
  for (int s = 0; s < info.n_seqs; ++s) {
    const Variable& v = c.in_var(info.seqs_begin() + s);
    TemplateData item;
    item.set("s", std::to_string(s));
    item.set("name", c.in(info.seqs_begin() + s));
    item.set("rowtype", scan_tensor_type(tensor_class, v, v.ndim() - 1));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("iidx", std::to_string(s));
    seqs.push_back(item);
  }
  data.set("seqs", seqs);
  data.set("mitmots", mit_mot_items(c, info, tensor_class));
  TemplateData bufs{TemplateData::type::list};
  for (int k = info.n_mit_mot(); k < info.untraced_outs_begin(); ++k) {
    TemplateData item = buffer_item(c, info, k, tensor_class);
    if (k >= info.n_tap_outs()) {
      const int j = k - info.n_tap_outs();
      TemplateData nit;
      nit.set("j", std::to_string(j));
      nit.set("len_in", c.in(info.nit_sot_lengths_begin() + j));
      TemplateData list{TemplateData::type::list};
      list.push_back(nit);
      item.set("nit", list);
      item.set("what", "nit-sot " + std::to_string(j));
    } else {
      item.set("what", "output " + std::to_string(k));
    }
    bufs.push_back(item);
  }
  data.set("bufs", bufs);
  TemplateData untraced{TemplateData::type::list};
  for (int j = 0; j < info.n_untraced_sit_sot; ++j) {
    const int k = info.untraced_outs_begin() + j;
    const Variable& v = c.out_var(k);
    TemplateData item;
    item.set("j", std::to_string(j));
    item.set("in", c.in(info.untraced_begin() + j));
    item.set("type", scan_tensor_type(tensor_class, v, v.ndim()));
    item.set("ctype", ctype(v.dtype()));
    item.set("ndim", std::to_string(v.ndim()));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("iidx", std::to_string(info.inner_untraced_begin() + j));
    item.set("oidx", std::to_string(info.inner_untraced_outs_begin() + j));
    item.set("out", c.out(k));
    item.set("alloc", c.alloc(k));
    untraced.push_back(item);
  }
  data.set("untraced", untraced);
  TemplateData nonseqs{TemplateData::type::list};
  for (int j = 0; j < info.n_non_seqs; ++j) {
    const Variable& v = c.in_var(info.non_seqs_begin() + j);
    TemplateData item;
    item.set("name", c.in(info.non_seqs_begin() + j));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("iidx", std::to_string(info.inner_non_seqs_begin() + j));
    nonseqs.push_back(item);
  }
  data.set("nonseqs", nonseqs);
  TemplateData cond{TemplateData::type::list};
  if (info.as_while) {
    const Variable& v = *op.inner_graph().outputs().back();
    TemplateData item;
    item.set("condtype", scan_tensor_type(tensor_class, v, 0));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("oidx", std::to_string(info.inner_condition()));
    cond.push_back(item);
  }
  data.set("cond", cond);
  data.set("inline_step", TemplateData{TemplateData::type::list});
  return data;
}

std::string emit_scan(const NodeEmitContext& c) {
  TemplateData data = scan_data(c, "kg::Tensor", c.inner_function());
  const auto& op = static_cast<const Scan&>(c.node().op());
  TemplateData inline_step{TemplateData::type::list};
  if (InlineStep step = inline_scalar_step(c, op, op.info()); !step.body.empty()) {
    TemplateData item;
    item.set("before", step.before);
    item.set("body", step.body);
    inline_step.push_back(item);
  }
  data.set("inline_step", inline_step);
  return render_template("templates/cpp/ops/control_scan.mustache", data);
}

}  // namespace kiln
