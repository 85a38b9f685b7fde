// RandomVariable nodes (ops/random.h; templates/cpp/ops/random_variable.mustache): the
// parameter checks and draws of runtime/include/kiln/runtime/random/variables.hpp, the same
// functions the reference evaluator calls, over the broadcast parameters in C order.
#include <string>

#include "codegen/c_names.h"
#include "codegen/cpp/emitters.h"
#include "codegen/render.h"
#include "ops/random.h"
#include "ops/random_core.h"
#include "ops/random_choice.h"
#include "ops/random_permutation.h"

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
  TemplateData first_pass{TemplateData::type::list};
  if (dist.first_pass) first_pass.push_back(TemplateData{});
  data.set("first_pass", first_pass);
  data.set("nparams", std::to_string(n_params));
  data.set("prank", std::to_string(prank));
  data.set("prank_or_1", std::to_string(prank > 0 ? prank : 1));
  data.set("orank", std::to_string(orank));
  data.set("orank_or_1", std::to_string(orank > 0 ? orank : 1));
  data.set("octype", ctype(c.out_var(1).dtype()));
  return render_op_template("random_variable", data);
}

std::string emit_core_random_variable(const NodeEmitContext& c) {
  const auto& op = static_cast<const CoreRandomVariable&>(c.node().op());
  const RvCoreDistribution& dist = op.distribution();
  const kiln_random::core::Spec spec = dist.spec();
  static const char* const kKinds[] = {"Dirichlet", "Multinomial", "Categorical", "MvNormal"};
  TemplateData data = c.base_data();
  data.set("op_comment", comment_text(op.str()));
  data.set("kind", kKinds[static_cast<int>(spec.kind)]);
  data.set("rng", c.in(0));
  TemplateData size{TemplateData::type::list};
  if (c.in_var(1).type().kind != TypeKind::None) {
    const int len = c.in_var(1).ndim() == 1 ? static_cast<int>(c.in_var(1).type().shape[0]) : 0;
    TemplateData item;
    item.set("size", c.in(1));
    item.set("size_len", std::to_string(len));
    item.set("size_len_or_1", std::to_string(len > 0 ? len : 1));
    size.push_back(item);
  }
  data.set("size", size);
  TemplateData params{TemplateData::type::list};
  for (int i = 0; i < spec.nparams; ++i) {
    TemplateData p;
    p.set("name", c.in(2 + i));
    p.set("ndim", std::to_string(c.in_var(2 + i).ndim()));
    params.push_back(p);
  }
  data.set("params", params);
  data.set("nparams", std::to_string(spec.nparams));
  data.set("orank", std::to_string(c.out_var(1).ndim()));
  data.set("octype", ctype(c.out_var(1).dtype()));
  data.set("drawtype", spec.integer ? "int64_t" : "double");
  data.set("real_out", spec.integer ? "nullptr" : "draws.data()");
  data.set("int_out", spec.integer ? "draws.data()" : "nullptr");
  TemplateData cholesky{TemplateData::type::list}, factor{TemplateData::type::list};
  if (spec.kind == kiln_random::core::Kind::MvNormal) {
    if (op.mv_method() == 0) {
      cholesky.push_back(TemplateData{});
    } else {
      TemplateData f;
      f.set("svd", op.mv_method() == 1 ? "true" : "false");
      factor.push_back(f);
    }
  }
  data.set("cholesky", cholesky);
  data.set("factor", factor);
  data.set("mv_method", std::to_string(op.mv_method()));
  return render_op_template("random_core_variable", data);
}

std::string emit_permutation(const NodeEmitContext& c) {
  const auto& op = static_cast<const PermutationRandomVariable&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("op_comment", comment_text(op.str()));
  data.set("rng", c.in(0));
  data.set("x", c.in(2));
  const int orank = c.out_var(1).ndim(), xrank = c.in_var(2).ndim();
  const int bn = orank - (op.core_ndim() > 0 ? op.core_ndim() : 1), bx = xrank - op.core_ndim();
  data.set("orank", std::to_string(orank));
  data.set("bn", std::to_string(bn));
  data.set("bn_or_1", std::to_string(bn > 0 ? bn : 1));
  data.set("bx", std::to_string(bx));
  data.set("octype", ctype(c.out_var(1).dtype()));
  TemplateData arange{TemplateData::type::list}, rows{TemplateData::type::list};
  (op.core_ndim() == 0 ? arange : rows).push_back(TemplateData{});
  data.set("arange", arange);
  data.set("rows", rows);
  TemplateData size{TemplateData::type::list};
  if (c.in_var(1).type().kind != TypeKind::None) {
    TemplateData item;
    item.set("size", c.in(1));
    size.push_back(item);
  }
  data.set("size", size);
  return render_op_template("random_permutation", data);
}

std::string emit_choice_without_replacement(const NodeEmitContext& c) {
  const auto& op = static_cast<const ChoiceWithoutReplacement&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("op_comment", comment_text(op.str()));
  data.set("rng", c.in(0));
  data.set("a", c.in(2));
  data.set("shape", c.in(op.shape_input()));
  const int len = op.shape_len();
  data.set("len", std::to_string(len));
  data.set("len_or_1", std::to_string(len > 0 ? len : 1));
  data.set("orank", std::to_string(c.out_var(1).ndim()));
  data.set("octype", ctype(c.out_var(1).dtype()));
  const bool a_is_int = op.a_core_ndim() == 0;
  data.set("a_is_int", a_is_int ? "true" : "false");
  data.set("scalar", len == 0 ? "true" : "false");
  TemplateData arange{TemplateData::type::list}, rows{TemplateData::type::list}, p{TemplateData::type::list};
  (a_is_int ? arange : rows).push_back(TemplateData{});
  data.set("arange", arange);
  data.set("rows", rows);
  if (op.has_p()) {
    TemplateData item;
    item.set("p", c.in(3));
    p.push_back(item);
  }
  data.set("p", p);
  data.set("p_data", op.has_p() ? "pv.data()" : "nullptr");
  data.set("p_single", op.has_p() && c.in_var(3).dtype() == DType::Float32 ? "true" : "false");
  return render_op_template("random_choice", data);
}

}  // namespace kiln
