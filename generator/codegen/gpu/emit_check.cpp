// CheckAndRaise and Assert on a GPU: one kernel per condition tests every element and, where
// one is zero, claims the device status word (templates/gpu/prologue/device_status.hpp); the
// host reads the word once at the end of the call and fails with the C++ backend's status
// (KILN_ERR_ASSERT) and message ("AssertionError: msg" at the node). The output is a view of
// input 0, as in the C++ backend.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/assert.h"

namespace kiln {

NodeCode gpu_emit_check_and_raise(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const CheckAndRaise&>(c.node().op());
  const std::string message = op.exc_type() + (op.msg().empty() ? "" : ": " + op.msg());
  TemplateData host = c.base_data();
  TemplateData conds{TemplateData::type::list};
  std::string kernels;
  for (int i = 1; i < c.node().num_inputs(); ++i) {
    const Variable& v = c.in_var(i);
    if (v.ndim() > 6)
      throw NotImplementedError("`" + std::string(op.name()) + "` with a condition of rank " + std::to_string(v.ndim()) +
                                " has no " + backend + " implementation: the checking kernel handles rank 6 at most");
    const std::string name = c.kernel_name() + "_c" + std::to_string(i);
    const std::string storage = gpu_storage_type(v.dtype());
    TemplateData k = d.data();
    k.set("name", name);
    k.set("comment", comment_text(std::string(op.str()), 100));
    k.set("index", std::to_string(i));
    k.set("stype", storage);
    k.set("c_param", d.buffer_param(storage, "c", true));
    k.set("c_bind", d.buffer_bind(storage, "c", true));
    k.set("st_param", d.buffer_param("int32_t", "st", false));
    k.set("st_bind", d.buffer_bind("int32_t", "st", false));
    kernels += render_template("templates/gpu/check.mustache", k);
    TemplateData item;
    item.set("index", std::to_string(i));
    item.set("name", c.in(i));
    item.set("rank", std::to_string(v.ndim()));
    item.set("message", c_string_literal(message));
    item.set("kernel_ref", d.kernel_ref(name));
    conds.push_back(item);
  }
  host.set("conds", conds);
  host.set("rank", std::to_string(c.in_var(0).ndim()));
  return NodeCode(render_template("templates/gpu/host/check.mustache", host), kernels);
}

}  // namespace kiln
