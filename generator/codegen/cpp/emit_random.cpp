// RandomVariable nodes (ops/random.h; templates/cpp/ops/random_variable.mustache): the
// parameter checks and draws of runtime/include/kiln/runtime/random/variables.hpp, the same
// functions the reference evaluator calls, over the broadcast parameters in C order.
#include <string>

#include "codegen/c_names.h"
#include "codegen/cpp/emitters.h"
#include "codegen/render.h"
#include "ops/random.h"

namespace kiln {

std::string emit_random_variable(const NodeEmitContext& c) {
  const auto& op = static_cast<const RandomVariable&>(c.node().op());
  const RvDistribution& dist = op.distribution();
  const int n_params = static_cast<int>(dist.params.size());
  const int orank = c.out_var(1).ndim();
  int prank = 0;
  for (int i = 0; i < n_params; ++i) prank = std::max(prank, c.in_var(2 + i).ndim());
  TemplateData data = c.base_data();
  data.set("op_comment", comment_text(op.str()));
  data.set("fn", "kiln_random::rv::" + std::string(dist.name));
  data.set("rng", c.in(0));
  TemplateData size{TemplateData::type::list};
  if (c.in_var(1).type().kind != TypeKind::None) {
    TemplateData item;
    item.set("size", c.in(1));
    size.push_back(item);
  }
  data.set("size", size);
  TemplateData params{TemplateData::type::list};
  for (int i = 0; i < n_params; ++i) {
    const bool integer = dist.params[static_cast<std::size_t>(i)].integer;
    TemplateData p;
    p.set("i", std::to_string(i));
    p.set("name", c.in(2 + i));
    p.set("ndim", std::to_string(c.in_var(2 + i).ndim()));
    p.set("field", integer ? "k" : "x");
    p.set("argtype", integer ? "int64_t" : "double");
    p.set("single", c.in_var(2 + i).dtype() == DType::Float32 ? "true" : "false");
    params.push_back(p);
  }
  data.set("params", params);
  TemplateData zero_scale{TemplateData::type::list};
  if (dist.zero_scale_param >= 0) {
    TemplateData z;
    z.set("scale", std::to_string(dist.zero_scale_param));
    z.set("loc", dist.loc_param >= 0 ? "a.x[" + std::to_string(dist.loc_param) + "]" : std::string("0.0"));
    zero_scale.push_back(z);
  }
  data.set("zero_scale", zero_scale);
  data.set("nparams", std::to_string(n_params));
  data.set("prank", std::to_string(prank));
  data.set("prank_or_1", std::to_string(prank > 0 ? prank : 1));
  data.set("orank", std::to_string(orank));
  data.set("orank_or_1", std::to_string(orank > 0 ? orank : 1));
  data.set("octype", ctype(c.out_var(1).dtype()));
  return render_op_template("random_variable", data);
}

}  // namespace kiln
