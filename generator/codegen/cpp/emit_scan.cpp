// Scan: the step function (the inner graph, emitted once as a function of its own by
// codegen/source.cpp) called from a loop over the steps, on rows of buffers kept in one scratch
// area of the context (templates/cpp/ops/control_scan.mustache, templates/cpp/prologue/scan.hpp).
// Semantics are Scan.perform's, as the reference evaluator runs them (ops/scan_perform.cpp).
#include "codegen/c_types.h"
#include "codegen/cpp/emit_control_flow.h"
#include "ir/error.h"
#include "ops/scan.h"

namespace kiln {

namespace {

std::string row_type(const Variable& v) {
  return "kg::Tensor<" + ctype(v.dtype()) + ", " + std::to_string(v.ndim() - 1) + ">";
}

// One tap or nit-sot buffer (output k of the node).
TemplateData buffer_item(const NodeEmitContext& c, const ScanInfo& info, int k) {
  const Variable& out = c.out_var(k);
  TemplateData item;
  item.set("k", std::to_string(k));
  item.set("type", tensor_type(out));
  item.set("rowtype", row_type(out));
  item.set("ctype", ctype(out.dtype()));
  item.set("ndim", std::to_string(out.ndim()));
  item.set("rowdim", std::to_string(out.ndim() - 1));
  item.set("dl", dl_dtype_literal(out.dtype()));
  item.set("out", c.out(k));
  item.set("alloc", c.alloc(k));
  item.set("oidx", std::to_string(info.inner_output_of(k)));
  item.set("neg_min", std::to_string(-info.min_tap(k)));
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

}  // namespace

std::string emit_scan(const NodeEmitContext& c) {
  const auto& op = static_cast<const Scan&>(c.node().op());
  const ScanInfo& info = op.info();
  if (info.n_mit_mot() > 0)
    throw NotImplementedError("`" + op.str() + "`: compiled code for a Scan with mit-mot buffers (the buffers of "
                              "PyTensor's backward scans) is not implemented yet; the reference evaluator runs it");
  TemplateData data = c.base_data();
  data.set("n_steps", c.in(0));
  data.set("step_fn", c.inner_function());
  data.set("slot", std::to_string(c.scratch_slot()));
  data.set("n_in", std::to_string(std::max(1, info.n_inner_inputs())));
  data.set("n_out", std::to_string(std::max(1, info.n_inner_outputs())));
  TemplateData seqs{TemplateData::type::list};
  for (int s = 0; s < info.n_seqs; ++s) {
    const Variable& v = c.in_var(info.seqs_begin() + s);
    TemplateData item;
    item.set("s", std::to_string(s));
    item.set("name", c.in(info.seqs_begin() + s));
    item.set("rowtype", row_type(v));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("iidx", std::to_string(s));
    seqs.push_back(item);
  }
  data.set("seqs", seqs);
  TemplateData bufs{TemplateData::type::list};
  for (int k = 0; k < info.untraced_outs_begin(); ++k) {
    TemplateData item = buffer_item(c, info, k);
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
    item.set("type", tensor_type(v));
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
    item.set("ctype", ctype(v.dtype()));
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("oidx", std::to_string(info.inner_condition()));
    cond.push_back(item);
  }
  data.set("cond", cond);
  return render_template("templates/cpp/ops/control_scan.mustache", data);
}

}  // namespace kiln
