// CumOp on a GPU (templates/gpu/cumulative.mustache): a parallel scan along the axis, or over
// the flattened input in C order. Each row is cut into chunks; one work-group per chunk scans
// it tile by tile (each work-item scans four consecutive elements, the group scans their totals
// in local memory, a carry runs across the chunk's tiles) and writes the chunk's total; a
// second kernel scans each row's chunk totals in order, and a third adds to every element the
// scan of the chunks before its own. The order of operations is fixed by the chunk length
// (from the shape and the device's size alone), so a call's result does not vary from run to
// run; integers wrap and bools or/and, so those results are exactly the C++ backend's, floats
// differ from its in-order scan only by rounding. Any input layout is read in place.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "codegen/gpu/row_layout.h"
#include "ops/cumulative.h"

namespace kiln {

NodeCode gpu_emit_cumop(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const CumOp&>(c.node().op());
  const bool add = op.mode() == CumMode::Add;
  const DType dt = c.in_var(0).dtype();
  const int ndim = c.in_var(0).ndim();
  const std::string name = c.kernel_name(), T = gpu_storage_type(dt), x = c.in(0), y = c.out(0);
  std::vector<int> along;
  for (int dim = 0; dim < ndim; ++dim)
    if (!op.axis() || *op.axis() == dim) along.push_back(dim);
  const GpuRowDims dims = gpu_row_dims(along, ndim);

  // Rows decoded through x's and y's lengths and strides; along a row, x by its own strides and
  // y by one step (y.strides[axis], or y.strides[0] of the flattened output).
  std::string params = d.buffer_param(T, "x", true) + ", " + d.buffer_param(T, "y", false) + ", " +
                       d.buffer_param(T, "totals", false) +
                       ", const int64_t rows, const int64_t n, const int64_t chunks, const int64_t len, const int64_t ystep";
  std::vector<std::string> args;
  gpu_row_params(dims, x, y, false, params, args);

  TemplateData data = d.data();
  data.set("name", name);
  data.set("comment", comment_text(op.str(), 100));
  data.set("T", T);
  data.set("mode", add ? "sum" : "product");
  data.set("is_bool", dt == DType::Bool);
  data.set("bool_rule", add ? "or" : "and");
  int counter = 0;
  const ScalarCode code = emit_scalar_code(ScalarOp(add ? ScalarOpId::Add : ScalarOpId::Mul), {"a", "b"}, {dt, dt}, "t",
                                           counter, gpu_scalar_table(backend));
  data.set("op", indent_lines(code.statements + "return (" + T + ")(" + code.results[0] + ");", "  "));
  data.set("identity", "(" + T + ")" + (add ? "0" : "1"));
  data.set("params", params);
  data.set("binds", d.buffer_bind(T, "x", true) + "\n  " + d.buffer_bind(T, "y", false) + "\n  " +
                        d.buffer_bind(T, "totals", false));
  data.set("totals_param", d.buffer_param(T, "totals", false));
  data.set("totals_bind", d.buffer_bind(T, "totals", false));
  data.set("local_scan", d.local_array(T, "sc", 256));
  data.set("row_start", gpu_row_start({"x", "y"}, dims.across.size(), "    "));
  data.set("row_start_y", gpu_row_start({"y"}, dims.across.size(), "    "));
  data.set("at_element", gpu_row_element({"x"}, dims.row.size(), "        "));

  TemplateData host = c.base_data();
  host.set("ndim", std::to_string(ndim));
  if (op.axis())
    host.set("axis", std::to_string(*op.axis()));
  else
    host.set("axis", false);
  host.set("ctype", ctype(dt));
  std::string rows = "1", n = "1";
  for (int dim : dims.across) rows += " * " + x + ".shape[" + std::to_string(dim) + "]";
  for (int dim : dims.row) n += " * " + x + ".shape[" + std::to_string(dim) + "]";
  host.set("rows", rows);
  host.set("n", n);
  host.set("ystep", op.axis() ? y + ".strides[" + std::to_string(*op.axis()) + "]" : y + ".strides[0]");
  host.set("scratch", std::to_string(c.scratch_slot()));
  host.set("tiles_kernel", d.kernel_ref(name + "_tiles"));
  host.set("carry_kernel", d.kernel_ref(name + "_carry"));
  host.set("add_kernel", d.kernel_ref(name + "_add"));
  host.set("dim_args", args.empty() ? "" : ", " + join(args, ", "));
  return NodeCode(render_template("templates/gpu/host/cumulative.mustache", host),
                  render_template("templates/gpu/cumulative.mustache", data));
}

}  // namespace kiln
