#include "api/graph_builder.h"

#include "ir/error.h"

namespace kiln {

Var GraphBuilder::input(const std::string& name, DType dtype, const Shape& shape) {
  for (auto d : shape)
    if (d < kUnknownLength) throw UserError("input \"" + name + "\": shape entries are lengths or -1");
  Var v = make_input(TensorType(dtype, shape), name);
  inputs_.push_back(v);
  return v;
}

void GraphBuilder::output(const Var& v, const std::string& name) {
  if (!v) throw UserError("output \"" + name + "\" is a null variable");
  // A named output that is an inner node gets the name; inputs and constants keep theirs.
  if (!name.empty() && v->owner() && v->name().empty()) v->set_name(name);
  outputs_.push_back(v);
  output_names_.push_back(name);
}

FunctionGraph GraphBuilder::build() const {
  FunctionGraph fg(inputs_, outputs_, name_);
  fg.set_output_names(output_names_);
  return fg;
}

}  // namespace kiln
