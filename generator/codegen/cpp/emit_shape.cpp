// DimShuffle (a view: new shape and strides over the same data), Shape and Shape_i.
#include "codegen/cpp/emitters.h"
#include "ops/dimshuffle.h"
#include "ops/shape.h"

namespace kiln {

std::string emit_dimshuffle(const NodeEmitContext& c) {
  const auto& op = static_cast<const DimShuffle&>(c.node().op());
  TemplateData data = c.base_data();
  TemplateData drops{TemplateData::type::list}, dims{TemplateData::type::list};
  for (int d : op.dropped()) {
    if (c.in_var(0).type().broadcastable(d)) continue;  // statically 1: nothing to check
    TemplateData item;
    item.set("d", std::to_string(d));
    drops.push_back(item);
  }
  for (std::size_t k = 0; k < op.new_order().size(); ++k) {
    int src = op.new_order()[k];
    TemplateData item;
    item.set("k", std::to_string(k));
    item.set("shape", src == DimShuffle::kNewAxis ? "1" : c.in(0) + ".shape[" + std::to_string(src) + "]");
    item.set("stride", src == DimShuffle::kNewAxis ? "0" : c.in(0) + ".strides[" + std::to_string(src) + "]");
    dims.push_back(item);
  }
  data.set("drops", drops);
  data.set("dims", dims);
  return render_template("templates/cpp/ops/dimshuffle.mustache", data);
}

std::string emit_shape(const NodeEmitContext& c) {
  TemplateData data = c.base_data();
  data.set("rank", std::to_string(c.in_var(0).ndim()));
  TemplateData dims{TemplateData::type::list};
  for (int d = 0; d < c.in_var(0).ndim(); ++d) {
    TemplateData item;
    item.set("k", std::to_string(d));
    dims.push_back(item);
  }
  data.set("dims", dims);
  data.set("single", false);
  return render_template("templates/cpp/ops/shape.mustache", data);
}

std::string emit_shape_i(const NodeEmitContext& c) {
  const auto& op = static_cast<const ShapeI&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("rank", false);
  data.set("dims", TemplateData{TemplateData::type::list});
  TemplateData single;
  single.set("i", std::to_string(op.i()));
  data.set("single", single);
  return render_template("templates/cpp/ops/shape.mustache", data);
}

}  // namespace kiln
