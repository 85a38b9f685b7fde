// Argmax on a GPU (templates/gpu/argmax.mustache): a row kernel, one work-group per output
// element (a grid-stride loop over them). Its work-items stride over the reduced elements in
// the C order of the reduced dimensions (PyTensor's rule for several axes), each keeping the
// first maximum it sees, and the group picks among their candidates in a local-memory tree:
// the greater value wins, the smaller position among equals, a NaN beats every number and the
// first NaN wins (NumPy's rule, as the C++ backend's templates/cpp/ops/reduce_argmax.mustache).
// The C++ backend's run-time check of a zero-length reduced axis, with its message.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "codegen/gpu/row_layout.h"
#include "ops/reduce.h"

namespace kiln {

NodeCode gpu_emit_argmax(const NodeEmitContext& c, const GpuDialect& d, const std::string&) {
  const auto& op = static_cast<const Argmax&>(c.node().op());
  const DType in = c.in_var(0).dtype();
  const GpuRowDims dims = gpu_row_dims(reduced_axes_list(op.axis(), c.in_var(0).ndim()), c.in_var(0).ndim());
  const std::string name = c.kernel_name(), T = gpu_storage_type(in), x = c.in(0), y = c.out(0);

  std::string params;
  std::vector<std::string> args;
  gpu_row_params(dims, x, y, true, params, args);

  TemplateData data = d.data();
  data.set("name", name);
  data.set("comment", comment_text(op.str(), 100));
  data.set("T", T);
  data.set("is_float", is_float(in));
  data.set("x_param", d.buffer_param(T, "x", true));
  data.set("x_bind", d.buffer_bind(T, "x", true));
  data.set("y_param", d.buffer_param("int64_t", "y", false));
  data.set("y_bind", d.buffer_bind("int64_t", "y", false));
  data.set("local_value", d.local_array(T, "mv", 256));
  data.set("local_index", d.local_array("int64_t", "mi", 256));
  data.set("dim_params", params);
  data.set("row_start", gpu_row_start({"x", "y"}, dims.across.size(), "    "));
  data.set("at_element", gpu_row_element({"x"}, dims.row.size(), "      "));

  TemplateData host = c.base_data();
  TemplateData kept{TemplateData::type::list}, checks{TemplateData::type::list};
  for (std::size_t i = 0; i < dims.across.size(); ++i) {
    TemplateData item;
    item.set("i", std::to_string(i));
    item.set("d", std::to_string(dims.across[i]));
    kept.push_back(item);
  }
  std::string n = "1";
  for (int dim : dims.row) {
    n += " * " + x + ".shape[" + std::to_string(dim) + "]";
    TemplateData item;
    item.set("d", std::to_string(dim));
    item.set("message",
             c_string_literal("Argmax: cannot take the argmax over axis " + std::to_string(dim) + ", which has length 0"));
    checks.push_back(item);
  }
  host.set("kept", kept);
  host.set("empty_checks", checks);
  host.set("n", n);
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("dim_args", args.empty() ? "" : ", " + join(args, ", "));
  return NodeCode(render_template("templates/gpu/host/argmax.mustache", host),
                  render_template("templates/gpu/argmax.mustache", data));
}

}  // namespace kiln
