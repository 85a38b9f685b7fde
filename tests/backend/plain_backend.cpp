#include "plain_backend.h"

#include <algorithm>
#include <memory>

#include "codegen/backend.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/cpp/special_math_select.h"
#include "codegen/render.h"
#include "driver/emit_files.h"
#include "ir/error.h"
#include "ops/cumulative.h"
#include "ops/elemwise.h"
#include "ops/op_table.h"

namespace kiln::testing {

namespace {

// The backend's templates, read from the source tree (they are not embedded in kiln).
std::string render_plain(const std::string& name, const TemplateData& data) {
  std::string text;
  const std::string path = std::string(KILN_SOURCE_DIR) + "/tests/backend/templates/" + name + ".mustache";
  if (!read_file(path, text)) throw InternalError("cannot read " + path);
  return render_template_text(text, data, path);
}

// The cpp backend's scalar spellings, but log1p from libm (kiln_vm::log1p belongs to the cpp
// backend's vector math prologue, which this backend leaves out).
const ScalarTable& plain_scalar_table() {
  static const ScalarTable table = ScalarTable::cpp().with("plain", "log1p", {{"float", "std::log1p({0})"}});
  return table;
}

std::string emit_elemwise_plain(const NodeEmitContext& c) {
  const auto& op = static_cast<const Elemwise&>(c.node().op());
  const Apply& node = c.node();
  const int nd = node.output_ptr(0)->ndim();
  TemplateData data = c.base_data();
  data.set("ndim", std::to_string(nd));
  data.set("ndim_or_1", std::to_string(nd > 0 ? nd : 1));
  data.set("n_in", std::to_string(node.num_inputs()));
  data.set("n_operands", std::to_string(node.num_inputs() + node.num_outputs()));
  TemplateData dims{TemplateData::type::list};
  for (int d = 0; d < nd; ++d) {
    std::vector<std::string> lengths, bcast;
    for (int k = 0; k < node.num_inputs(); ++k) {
      lengths.push_back(c.in(k) + ".shape[" + std::to_string(d) + "]");
      bcast.push_back(c.in_var(k).type().broadcastable(d) ? "true" : "false");
    }
    TemplateData dim;
    dim.set("d", std::to_string(d));
    dim.set("lengths", join(lengths, ", "));
    dim.set("broadcastable", join(bcast, ", "));
    dims.push_back(dim);
  }
  data.set("dims", dims);
  TemplateData inputs{TemplateData::type::list}, operands{TemplateData::type::list};
  std::vector<std::string> args;
  std::vector<DType> dtypes;
  for (int k = 0; k < node.num_inputs(); ++k) {
    TemplateData in;
    in.set("k", std::to_string(k));
    in.set("name", c.in(k));
    in.set("ctype", ctype(c.in_var(k).dtype()));
    inputs.push_back(in);
    operands.push_back(in);
    args.push_back("i" + std::to_string(k));
    dtypes.push_back(c.in_var(k).dtype());
  }
  int counter = 0;
  ScalarCode code = emit_scalar_code(op.scalar_op(), args, dtypes, "t", counter, plain_scalar_table());
  data.set("body", indent_lines(code.statements, "    "));
  TemplateData outputs{TemplateData::type::list};
  for (int k = 0; k < node.num_outputs(); ++k) {
    const std::string operand = std::to_string(node.num_inputs() + k);
    TemplateData out;
    out.set("name", c.out(k));
    out.set("ndim", std::to_string(nd));
    out.set("alloc", c.alloc(k));
    out.set("operand", operand);
    out.set("result", code.results[static_cast<std::size_t>(k)]);
    outputs.push_back(out);
    TemplateData o;
    o.set("k", operand);
    o.set("name", c.out(k));
    operands.push_back(o);
  }
  data.set("inputs", inputs);
  data.set("operands", operands);
  data.set("outputs", outputs);
  return render_plain("elemwise", data);
}

std::string emit_cumop_plain(const NodeEmitContext& c) {
  const auto& op = static_cast<const CumOp&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("T", ctype(c.in_var(0).dtype()));
  data.set("ndim", std::to_string(c.in_var(0).ndim()));
  data.set("fn", op.mode() == CumMode::Add ? "wrap_add" : "wrap_mul");
  if (op.axis())
    data.set("axis", std::to_string(*op.axis()));
  else
    data.set("axis", false);
  return render_plain("cumulative", data);
}

std::shared_ptr<Backend> make_plain_backend() {
  auto b = std::make_shared<Backend>();
  b->name = "plain";
  b->description = "plain C++, no threads, vector math or BLAS (a test of the backend seam, tests/backend/)";
  b->ops = {
      {"Elemwise", emit_elemwise_plain, false},
      {"CumOp", emit_cumop_plain, false},
      {"DimShuffle", emit_dimshuffle, true},
      {"Shape", emit_shape, false},
      {"Shape_i", emit_shape_i, false},
  };
  for (const OpEntry& e : op_table()) {
    const std::string_view op = e.built_op_name();
    const bool listed = std::any_of(b->unsupported.begin(), b->unsupported.end(),
                                    [&](const UnsupportedOp& u) { return u.op_name == op; });
    if (e.implemented() && !b->find(op) && !listed)
      b->unsupported.push_back({op, "outside the seam test: loops, scans and views only"});
  }
  b->unsupported_dtypes = {{DType::Complex64, "outside the seam test"}, {DType::Complex128, "outside the seam test"}};
  b->templates = "templates/cpp";
  b->prologue = {"runtime/include/kiln/runtime/half.hpp", "runtime/include/kiln/runtime/scalar_math.hpp", "templates/cpp/prologue/runtime.hpp"};
  // scipy.special's functions are plain scalar C++ (kiln/runtime/special/): the same pieces.
  b->optional_prologue = {{"", {}, special_math_pieces, "", ""}};
  b->scalar_classes = [](const std::string& name) { return plain_scalar_table().classes(name); };
  b->toolchain.openmp = false;
  b->toolchain.vector_math = false;
  b->toolchain.blas = false;
  return b;
}

}  // namespace

void register_plain_backend() {
  static const bool registered = [] {
    register_backend(make_plain_backend());
    return true;
  }();
  (void)registered;
}

std::vector<std::string> plain_backend_ops() {
  register_plain_backend();
  std::vector<std::string> names;
  for (const OpEmitter& e : find_backend("plain").ops) names.emplace_back(e.op_name);
  return names;
}

}  // namespace kiln::testing
