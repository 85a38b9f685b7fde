#include "codegen/cpp/library.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <sstream>

#include "codegen/c_names.h"
#include "codegen/cpp/backend.h"
#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/cpp/vector_math_select.h"
#include "codegen/embedded_files.h"
#include "codegen/gather_fusion.h"
#include "codegen/lowering.h"
#include "codegen/render.h"
#include "codegen/shape_graph.h"
#include "rewrite/inline_op_from_graph.h"
#include "driver/sha256.h"
#include "ir/branch_schedule.h"
#include "io/output_names.h"
#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/scalar/composite.h"
#include "kiln/kiln.h"
#include "kiln/version.h"

namespace kiln {

namespace {

// An embedded header split for inclusion in generated code: its <system> includes (hoisted
// to the top of the file) and its body without #pragma once and "kiln/..." includes.
struct Embedded {
  std::vector<std::string> includes;
  std::string body;
};

Embedded split_embedded(std::string_view path) {
  Embedded e;
  std::istringstream in{std::string(embedded_file(path))};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#pragma once", 0) == 0 || line.rfind("#include \"", 0) == 0) continue;
    if (line.rfind("#include <", 0) == 0) {
      e.includes.push_back(line);
      continue;
    }
    e.body += line + "\n";
  }
  return e;
}

void add_includes(std::vector<std::string>& all, const std::vector<std::string>& more) {
  for (const auto& inc : more)
    if (std::find(all.begin(), all.end(), inc) == all.end()) all.push_back(inc);
}

std::string element_literal(const Array& a, std::int64_t i) {
  Array one = Array::view_of(a.storage(), static_cast<char*>(a.data()) + i * static_cast<std::int64_t>(a.itemsize()),
                             a.dtype(), {}, {});
  std::string lit = scalar_literal(one);
  // Drop the static_cast wrapper inside array initialisers (the element type is explicit).
  if (lit.rfind("static_cast<", 0) == 0) {
    auto open = lit.find(">(");
    lit = lit.substr(open + 2, lit.size() - open - 3);
  }
  return lit;
}

std::string constant_array(const std::string& cname, const Array& value) {
  std::string text = "alignas(64) const " + ctype(value.dtype()) + " " + cname + "[] = {";
  const std::int64_t n = value.size();
  if (n == 0) return text + "{}};\n";
  for (std::int64_t i = 0; i < n; ++i) {
    text += (i % 8 == 0 ? "\n    " : " ") + element_literal(value, i) + (i + 1 < n ? "," : "");
  }
  return text + "\n};\n";
}

// Where a graph's constants go: small ones become initialiser lists inside the graph's
// namespace; large ones become DataBlobs, declared at file scope by their hidden symbol.
struct ConstantSink {
  std::string prefix;                     // the graph's symbol prefix
  std::vector<std::string> arrays;        // inline definitions
  std::vector<std::string> declarations;  // extern "C" declarations of blob symbols
  std::vector<DataBlob> blobs;
};

// Emits constant `index` of function `fn`; returns the name generated code reads it through.
std::string add_constant(ConstantSink& sink, const std::string& fn, std::size_t index, const Array& value) {
  if (value.nbytes() < kInlineConstantMaxBytes) {
    std::string array = "k" + fn + "_c" + std::to_string(index);
    sink.arrays.push_back(constant_array(array, value));
    return array;
  }
  DataBlob blob;
  blob.symbol = sink.prefix + "_const_" + fn + "_" + std::to_string(index);
  blob.file_name = blob.symbol + ".bin";
  blob.data = value.contiguous();
  blob.sha256 = sha256_hex(std::string_view(static_cast<const char*>(blob.data.data()), blob.data.nbytes()));
  // Hidden: shared with NAME_data.S's object, never exported from a shared library.
  sink.declarations.push_back("extern \"C\" const " + ctype(value.dtype()) + " " + blob.symbol +
                              "[] __attribute__((visibility(\"hidden\")));  // " +
                              std::to_string(blob.data.nbytes()) + " bytes, in " + blob.file_name + "\n");
  sink.blobs.push_back(std::move(blob));
  return sink.blobs.back().symbol;
}

// A string for the assembler's .incbin: printable characters that mean nothing to the C
// preprocessor or the assembler stay, every other byte becomes a three-digit octal escape.
std::string asm_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || std::strchr("/_.-+,:=@%~ ", ch)) {
      out += static_cast<char>(ch);
    } else {
      const char octal[] = {'\\', static_cast<char>('0' + (ch >> 6)), static_cast<char>('0' + ((ch >> 3) & 7)),
                            static_cast<char>('0' + (ch & 7)), '\0'};
      out += octal;
    }
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

std::string node_label(const Apply& node, int index) {
  std::string s = "node [" + std::to_string(index) + "] " + node.op().str();
  std::vector<std::string> names;
  for (int o = 0; o < node.num_outputs(); ++o) {
    const Variable* v = node.output_ptr(o);
    std::string n = !v->name().empty() ? v->name() : v->file_id();
    if (!n.empty()) names.push_back("\"" + n + "\"");
  }
  if (!names.empty()) s += " -> " + join(names, ", ");
  return s;
}

// The lines that close the lazy branches `open` has and `next` lacks, then open those `next`
// adds (`open` becomes `next`); false when there are none. Branch 0 of an IfElse runs when its
// condition is nonzero, branch 1 otherwise.
TemplateData branch_transition(RegionPath& open, const RegionPath& next, const LoweredGraph& lg) {
  std::size_t common = 0;
  while (common < open.size() && common < next.size() && open[common] == next[common]) ++common;
  std::string code;
  for (std::size_t k = open.size(); k > common; --k) code += "  }  // branch " + std::to_string(open[k - 1].second) + "\n";
  for (std::size_t k = common; k < next.size(); ++k) {
    const auto& [lazy, branch] = next[k];
    KILN_INTERNAL_ASSERT(lazy->op().name() == "IfElse", "the C++ backend runs the branches of IfElse only");
    const std::string cond = lg.var(lazy->input(0).get()).cname + ".data[0] != 0";
    code += "  if (" + (branch == 0 ? cond : "!(" + cond + ")") + ") {  // branch " + std::to_string(branch) + "\n";
  }
  open = next;
  if (code.empty()) return TemplateData(false);
  return TemplateData(code);
}

// One generated function: bind inputs and constants, run every node, copy outputs.
std::string emit_function(const LoweredGraph& lg, const std::string& fn, const std::string& comment,
                          ConstantSink& constant_sink) {
  const FunctionGraph& fg = *lg.graph;
  TemplateData data;
  data.set("fn", fn);
  data.set("comment", comment);
  TemplateData vars{TemplateData::type::list};
  for (const Variable* v : lg.declared) {
    TemplateData item;
    item.set("type", tensor_type(*v));
    item.set("name", lg.var(v).cname);
    vars.push_back(item);
  }
  data.set("vars", vars);

  TemplateData inputs{TemplateData::type::list};
  for (std::size_t k = 0; k < fg.inputs().size(); ++k) {
    const Variable& v = *fg.inputs()[k];
    std::vector<std::string> dims;
    for (auto d : v.shape()) dims.push_back(std::to_string(d));
    if (dims.empty()) dims.push_back("0");
    TemplateData item;
    item.set("k", std::to_string(k));
    item.set("name", lg.var(&v).cname);
    item.set("dl", dl_dtype_literal(v.dtype()));
    item.set("static_shape", join(dims, ", "));
    item.set("label", c_string_literal(v.name().empty() ? v.file_id() : v.name()));
    inputs.push_back(item);
  }
  data.set("inputs", inputs);

  TemplateData constants{TemplateData::type::list};
  for (std::size_t i = 0; i < lg.constants.size(); ++i) {
    const Variable& v = *lg.constants[i];
    std::string array = add_constant(constant_sink, fn, i, v.value());
    TemplateData item;
    item.set("name", lg.var(&v).cname);
    item.set("ctype", ctype(v.dtype()));
    item.set("array", array);
    TemplateData dims{TemplateData::type::list};
    for (int d = 0; d < v.ndim(); ++d) {
      TemplateData dim;
      dim.set("d", std::to_string(d));
      dim.set("len", std::to_string(v.value().shape()[static_cast<std::size_t>(d)]));
      dims.push_back(dim);
    }
    item.set("dims", dims);
    constants.push_back(item);
  }
  data.set("constants", constants);

  TemplateData steps{TemplateData::type::list};
  const auto where = [&](const Apply& node) {
    const auto it = std::find(lg.order.begin(), lg.order.end(), &node);
    return c_string_literal(node_label(node, static_cast<int>(it - lg.order.begin())));
  };
  // Lazy branches: each run of a branch's nodes sits in an `if` on its lazy node's condition
  // (lowering ordered the nodes by the same schedule).
  const auto regions = has_lazy_nodes(fg) ? region_paths(branch_schedule(fg))
                                          : std::unordered_map<const Apply*, RegionPath>{};
  RegionPath open_regions;
  const auto enter = [&](const Apply& node, TemplateData& item) {
    const auto r = regions.find(&node);
    item.set("regions", branch_transition(open_regions, r == regions.end() ? RegionPath{} : r->second, lg));
  };
  for (std::size_t i = 0; i < lg.order.size(); ++i) {
    const Apply& node = *lg.order[i];
    const auto group = lg.group_of.find(&node);
    if (group != lg.group_of.end()) {
      // A row-block group runs as one step at its first member (the product); the others
      // are part of it.
      const RowBlockGroup& g = lg.groups[static_cast<std::size_t>(group->second)];
      if (&node != g.product) continue;
      std::vector<std::string> members;
      for (const Apply* m : g.nodes) {
        const auto pos = std::find(lg.order.begin(), lg.order.end(), m) - lg.order.begin();
        members.push_back("[" + std::to_string(pos) + "] " + comment_text(m->op().str(), 60));
      }
      TemplateData item;
      enter(node, item);
      item.set("index", std::to_string(i));
      item.set("comment", "row-block pass over " + lg.var(g.matrix).cname + ": " + join(members, ", "));
      item.set("where", where(node));
      item.set("code", indent_lines(emit_row_block(g, lg, static_cast<int>(i), where), "    "));
      steps.push_back(item);
      continue;
    }
    if (lg.fused_gathers.count(&node)) continue;  // its reader computes it (gather_fusion.h)
    const CppOpEntry& entry = cpp_entry(node.op());
    NodeEmitContext ctx(node, lg, static_cast<int>(i));
    std::string label = node_label(node, static_cast<int>(i));
    std::vector<std::string> outs;
    for (int o = 0; o < node.num_outputs(); ++o) outs.push_back(lg.var(node.output_ptr(o)).cname);
    TemplateData item;
    enter(node, item);
    item.set("index", std::to_string(i));
    item.set("comment", comment_text(node.op().str(), 100) + " -> " + join(outs, ", "));
    item.set("where", c_string_literal(label));
    item.set("code", indent_lines(entry.emit(ctx), "    "));
    steps.push_back(item);
  }
  KILN_INTERNAL_ASSERT(open_regions.empty(), "a lazy branch is still open after the last step");
  data.set("steps", steps);

  TemplateData copies{TemplateData::type::list};
  for (const auto& copy : lg.copies) {
    TemplateData item;
    item.set("k", std::to_string(copy.output_index));
    item.set("source", lg.var(copy.source).cname);
    item.set("type", tensor_type(*copy.source));
    item.set("ndim", std::to_string(copy.source->ndim()));
    item.set("dl", dl_dtype_literal(copy.source->dtype()));
    copies.push_back(item);
  }
  data.set("copies", copies);
  return render_template("templates/cpp/function.mustache", data);
}

bool is_view_node(const Apply& node) { return cpp_entry(node.op()).is_view; }
bool needs_scratch_node(const Apply& node) { return cpp_entry(node.op()).needs_scratch; }

// Unique C identifiers for a list of display names.
std::vector<std::string> unique_identifiers(const std::vector<std::string>& names, const std::string& fallback,
                                            std::set<std::string> taken) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string base = c_identifier(names[i], fallback + std::to_string(i));
    std::string id = base;
    for (int n = 2; taken.count(id); ++n) id = base + "_" + std::to_string(n);
    taken.insert(id);
    out.push_back(id);
  }
  return out;
}

std::string tensor_infos(const VarList& vars, const std::vector<std::string>& names, TemplateData& list) {
  std::vector<std::string> shapes;
  int offset = 0;
  for (std::size_t k = 0; k < vars.size(); ++k) {
    TemplateData item;
    item.set("name", c_string_literal(names[k]));
    item.set("dtype", std::to_string(static_cast<int>(vars[k]->dtype())));
    item.set("ndim", std::to_string(vars[k]->ndim()));
    item.set("offset", std::to_string(offset));
    list.push_back(item);
    for (auto d : vars[k]->shape()) shapes.push_back(std::to_string(d));
    offset += vars[k]->ndim();
  }
  if (shapes.empty()) shapes.push_back("0");
  return join(shapes, ", ");
}

// The graph lowered with the code generator's schedules: row-block groups and fused gathers.
LoweredGraph lower_with_schedules(const FunctionGraph& fg) {
  std::vector<RowBlockGroup> groups = find_row_block_groups(fg);
  std::unordered_set<const Apply*> grouped;
  for (const auto& g : groups) grouped.insert(g.nodes.begin(), g.nodes.end());
  std::unordered_set<const Apply*> gathers = find_fused_gathers(fg, grouped);
  return lower(fg, is_view_node, 0, std::move(groups), needs_scratch_node, std::move(gathers));
}

// The kiln_kind of each variable (kiln.h): an rng's uint64[6] state is marked as one. A
// trailing 0 keeps the array non-empty when there are no variables.
std::string abi_kinds(const VarList& vars) {
  std::vector<std::string> kinds;
  for (const auto& v : vars) kinds.push_back(v->type().kind == TypeKind::Rng ? "KILN_KIND_RNG" : "KILN_KIND_TENSOR");
  kinds.push_back("0");
  return join(kinds, ", ");
}

// Everything one graph contributes to a source file: its constants, functions, metadata and
// extern "C" entry points (graph_impl.cpp.mustache).
struct GraphCode {
  std::string impl;
  std::vector<DataBlob> blobs;
  bool needs_blas = false;
};

GraphCode generate_graph_code(const FunctionGraph& graph, const std::string& name) {
  // Code generation has no OpFromGraph: a graph compiled without rewriting is inlined here.
  const std::optional<FunctionGraph> inlined = inlined_copy(graph);
  const FunctionGraph& fg = inlined ? *inlined : graph;
  LoweredGraph main_lg = lower_with_schedules(fg);
  FunctionGraph shape_fg = build_shape_graph(fg);
  LoweredGraph shape_lg = lower(shape_fg, is_view_node, main_lg.num_slots, {}, needs_scratch_node);

  ConstantSink constants;
  constants.prefix = name;
  std::string main_fn = emit_function(main_lg, "run_graph", "The graph " + comment_text(fg.name()) + ".", constants);
  std::string shape_fn = emit_function(shape_lg, "run_shapes",
                                       "The output shapes of the graph, computed from the inputs (the shape graph).",
                                       constants);
  GraphCode code;
  for (const LoweredGraph* lg : {&main_lg, &shape_lg})
    for (Apply* node : lg->order) code.needs_blas = code.needs_blas || cpp_entry(node->op()).needs_blas;

  std::vector<std::string> input_names, output_names;
  for (const auto& in : fg.inputs()) input_names.push_back(in->name().empty() ? in->file_id() : in->name());
  for (std::size_t k = 0; k < fg.outputs().size(); ++k) output_names.push_back(output_display_name(fg, k));

  TemplateData src;
  src.set("name", name);
  src.set("kiln_version", KILN_VERSION_STRING);
  src.set("graph_name_comment", c_string_literal(comment_text(fg.name())));
  src.set("constants", string_list(constants.arrays));
  src.set("functions", string_list({main_fn, shape_fn}));
  TemplateData in_list{TemplateData::type::list}, out_list{TemplateData::type::list};
  src.set("input_shapes", tensor_infos(fg.inputs(), input_names, in_list));
  src.set("output_shapes", tensor_infos(fg.outputs(), output_names, out_list));
  src.set("input_kinds", abi_kinds(fg.inputs()));
  src.set("output_kinds", abi_kinds(fg.outputs()));
  src.set("inputs", in_list);
  src.set("outputs", out_list);
  src.set("num_inputs", std::to_string(fg.inputs().size()));
  src.set("num_outputs", std::to_string(fg.outputs().size()));
  src.set("num_shape_outputs", std::to_string(shape_fg.outputs().size()));
  src.set("num_slots", std::to_string(main_lg.num_slots + shape_lg.num_slots));
  src.set("name_literal", c_string_literal(name));
  src.set("graph_name_literal", c_string_literal(fg.name()));
  code.impl = render_template("templates/cpp/graph_impl.cpp.mustache", src);
  if (!constants.declarations.empty())
    code.impl = "// Large constants of " + name + ", defined in " + name + "_data.S.\n" +
                join(constants.declarations, "") + "\n" + code.impl;
  code.blobs = std::move(constants.blobs);
  return code;
}

// The source file around one or more graphs: includes, the ABI, the runtime prologue.
std::string source_file(const std::string& file_name, const std::string& description,
                        const std::vector<std::string>& headers, const std::vector<std::string>& graph_impls) {
  std::vector<std::string> includes = {"#include <cmath>", "#include <cstdint>", "#include <cstring>", "#include <limits>"};
  Embedded scalar_math = split_embedded("runtime/include/kiln/runtime/scalar_math.hpp");
  Embedded runtime = split_embedded("templates/cpp/prologue/runtime.hpp");
  Embedded indexing = split_embedded("templates/cpp/prologue/indexing.hpp");
  // SIMD declarations of libm functions (a no-op unless built with -DKILN_SLEEF): at file
  // scope, ahead of every use, so that loops calling them vectorise.
  Embedded vector_math = split_embedded("templates/cpp/prologue/vector_math.hpp");
  add_includes(includes, vector_math.includes);
  add_includes(includes, scalar_math.includes);
  add_includes(includes, runtime.includes);
  add_includes(includes, indexing.includes);
  // Linear algebra (emit_linalg.cpp) only where a graph has some: LAPACK's declarations, the
  // per-matrix kernels and the batch loop.
  std::string linalg;
  if (std::any_of(graph_impls.begin(), graph_impls.end(),
                  [](const std::string& code) { return code.find("kg::linalg::") != std::string::npos; }))
    for (const char* path : {"runtime/include/kiln/runtime/lapack.hpp", "runtime/include/kiln/runtime/linalg_kernels.hpp",
                             "templates/cpp/prologue/linalg.hpp"}) {
      Embedded piece = split_embedded(path);
      add_includes(includes, piece.includes);
      linalg += piece.body + "\n";
    }
  TemplateData src;
  src.set("file_name", file_name);
  src.set("description", description);
  src.set("kiln_version", KILN_VERSION_STRING);
  src.set("headers", string_list(headers));
  src.set("includes", string_list(includes));
  src.set("abi_header", std::string(embedded_file("runtime/include/kiln/kiln.h")));
  src.set("prologue", scalar_math.body + "\n" + runtime.body + "\n" + indexing.body + linalg);
  // Only the SIMD declarations of the libm functions the graphs call (and the prologue's
  // kiln_scalar functions they use call).
  src.set("vector_math", select_vector_math(vector_math.body, called_math_functions(graph_impls)));
  src.set("graphs", string_list(graph_impls));
  return render_template("templates/cpp/graph.cpp.mustache", src);
}

}  // namespace

GraphStats graph_stats(const FunctionGraph& fg) {
  GraphStats st;
  LoweredGraph lg = lower_with_schedules(fg);
  st.slots = lg.num_slots;
  st.row_block_passes = static_cast<int>(lg.groups.size());
  for (Apply* node : lg.order) {
    if (lg.fused_gathers.count(node)) continue;  // computed inside its reader's loop
    (is_view_node(*node) ? st.views : st.kernels) += 1;
    const std::string name(node->op().name());
    if (name == "Elemwise") {
      const auto& sop = static_cast<const Elemwise&>(node->op()).scalar_op();
      if (sop.id() == ScalarOpId::Composite) {
        st.fused_nodes += 1;
        st.scalar_ops += static_cast<int>(sop.composite_graph()->nodes().size());
      } else {
        st.scalar_ops += 1;
      }
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const LoweredVar& lv = lg.var(node->output_ptr(o));
      if (lv.kind != StorageKind::Workspace) continue;
      st.intermediates += 1;
      if (lv.inplace_of) st.inplace += 1;
      const Variable& v = *node->output_ptr(o);
      if (v.type().fully_static())
        st.static_bytes += shape_size(v.shape()) * static_cast<std::int64_t>(dtype_size(v.dtype()));
      else
        st.dynamic_intermediates += 1;
    }
  }
  return st;
}

CppLibrary generate_cpp_bundle(const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                               const std::string& name) {
  CppLibrary lib;
  lib.name = c_identifier(name);
  std::vector<std::string> impls;
  for (const auto& [fg, graph_name] : graphs) {
    GraphCode code = generate_graph_code(*fg, c_identifier(graph_name));
    impls.push_back(code.impl);
    lib.needs_blas = lib.needs_blas || code.needs_blas;
    for (auto& blob : code.blobs) lib.blobs.push_back(std::move(blob));
  }
  lib.source = source_file(lib.name + ".cpp", std::to_string(graphs.size()) + " graphs", {}, impls);
  return lib;
}

CppLibrary generate_cpp_library(const FunctionGraph& fg, const std::string& name_override) {
  CppLibrary lib;
  lib.name = c_identifier(name_override.empty() ? fg.name() : name_override);
  const std::string& name = lib.name;
  GraphCode code = generate_graph_code(fg, name);
  lib.needs_blas = code.needs_blas;
  lib.blobs = std::move(code.blobs);
  lib.source = source_file(name + ".cpp", "the graph " + c_string_literal(comment_text(fg.name())), {name + ".h"}, {code.impl});

  std::vector<std::string> input_names, output_names;
  for (const auto& in : fg.inputs()) input_names.push_back(in->name().empty() ? in->file_id() : in->name());
  for (std::size_t k = 0; k < fg.outputs().size(); ++k) output_names.push_back(output_display_name(fg, k));

  // NAME.h
  TemplateData hdr;
  hdr.set("name", name);
  hdr.set("kiln_version", KILN_VERSION_STRING);
  hdr.set("graph_name_comment", c_string_literal(comment_text(fg.name())));
  std::string guard;
  for (char ch : name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  hdr.set("guard", guard);
  hdr.set("abi_header", std::string(embedded_file("runtime/include/kiln/kiln.h")));
  hdr.set("abi_version", std::to_string(KILN_ABI_VERSION));
  Embedded cpp_layer = split_embedded("runtime/include/kiln/kiln.hpp");
  hdr.set("cpp_header", join(cpp_layer.includes, "\n") + "\n" + cpp_layer.body);
  std::vector<std::string> in_comments, out_comments;
  auto type_comment = [](const Var& v) {
    return v->type().str() + (v->type().kind == TypeKind::Rng ? " (a uint64[6] PCG64 state, kiln.h)" : "");
  };
  for (std::size_t k = 0; k < fg.inputs().size(); ++k)
    in_comments.push_back(comment_text(input_names[k], 40) + " " + type_comment(fg.inputs()[k]));
  for (std::size_t k = 0; k < fg.outputs().size(); ++k)
    out_comments.push_back(comment_text(output_names[k], 40) + " " + type_comment(fg.outputs()[k]));
  hdr.set("input_list", in_comments.empty() ? "none" : join(in_comments, ", "));
  hdr.set("output_list", out_comments.empty() ? "none" : join(out_comments, ", "));

  std::set<std::string> reserved = {"ctx_", "ins", "outs", "status", "f", "name", "kiln"};
  std::vector<std::string> params = unique_identifiers(input_names, "input", reserved);
  std::set<std::string> taken_members;
  std::vector<std::string> members = unique_identifiers(output_names, "output", taken_members);
  std::vector<std::string> param_decls, bind, adopt, dl_outs, into_decls;
  bind.push_back("    DLTensor ins[" + std::to_string(std::max<std::size_t>(1, params.size())) + "] = {};");
  for (std::size_t k = 0; k < params.size(); ++k) {
    const Variable& v = *fg.inputs()[k];
    std::string slot = "    ins[" + std::to_string(k) + "]";
    if (v.ndim() == 0) {
      param_decls.push_back(ctype(v.dtype()) + " " + params[k]);
      bind.push_back(slot + ".data = &" + params[k] + ";");
      bind.push_back(slot + ".device = DLDevice{kDLCPU, 0};");
      bind.push_back(slot + ".dtype = kiln::dl_dtype(static_cast<kiln_dtype>(" +
                     std::to_string(static_cast<int>(v.dtype())) + "));");
    } else {
      param_decls.push_back("const kiln::Tensor& " + params[k]);
      bind.push_back(slot + " = " + params[k] + ".dl();");
    }
  }
  TemplateData outs{TemplateData::type::list};
  std::set<std::string> param_set(params.begin(), params.end());
  for (std::size_t k = 0; k < members.size(); ++k) {
    TemplateData item;
    item.set("member", members[k]);
    item.set("comment", out_comments[k]);
    outs.push_back(item);
    adopt.push_back("kiln::Tensor::adopt(outs[" + std::to_string(k) + "])");
    std::string out_param = "out_" + members[k];
    while (param_set.count(out_param)) out_param += "_";
    into_decls.push_back("kiln::Tensor& " + out_param);
    dl_outs.push_back(out_param + ".dl()");
  }
  std::vector<std::string> all_into = param_decls;
  all_into.insert(all_into.end(), into_decls.begin(), into_decls.end());
  hdr.set("outputs", outs);
  hdr.set("params", join(param_decls, ", "));
  hdr.set("params_into", join(all_into, ", "));
  hdr.set("args", join(params, ", "));
  hdr.set("bind_inputs", join(bind, "\n"));
  hdr.set("adopt_outputs", join(adopt, ", "));
  hdr.set("dl_outputs", join(dl_outs, ", "));
  hdr.set("num_outputs_or_1", std::to_string(std::max<std::size_t>(1, members.size())));
  lib.header = render_template("templates/cpp/graph.h.mustache", hdr);

  // NAME_main.cpp
  TemplateData mainp;
  mainp.set("name", name);
  mainp.set("kiln_version", KILN_VERSION_STRING);
  std::vector<std::string> main_includes = {"#include <cstdio>", "#include <cstdlib>", "#include <string>", "#include <vector>"};
  std::string npy_body;
  for (const char* path : {"runtime/include/kiln/runtime/dtype.hpp", "runtime/include/kiln/runtime/array.hpp",
                           "runtime/include/kiln/runtime/npy.hpp", "runtime/include/kiln/runtime/array_print.hpp"}) {
    Embedded e = split_embedded(path);
    add_includes(main_includes, e.includes);
    npy_body += e.body;
  }
  mainp.set("includes", string_list(main_includes));
  mainp.set("npy_runtime", npy_body);
  std::vector<std::string> files;
  for (const auto& f : output_file_names(fg)) files.push_back(c_string_literal(f));
  if (files.empty()) files.push_back("\"\"");
  mainp.set("output_files", join(files, ", "));
  lib.main_program = render_template("templates/cpp/main.cpp.mustache", mainp);
  return lib;
}

std::string data_assembly(const CppLibrary& lib, const std::string& data_dir) {
  // Only ELF is written for (section flags and .type/.size); '%' spells the types so the
  // file also assembles where '@' starts a comment (ARM). Comments are C style: the file goes
  // through the C preprocessor, which strips them, so content hashes live in .L labels.
  std::string s = "/* " + lib.name + "_data.S - generated by kiln " KILN_VERSION_STRING
                  ": the large constants of " + lib.name + ".cpp as binary data. Do not edit. */\n"
                  "#if !defined(__ELF__)\n#error \"kiln's data files are written for ELF targets\"\n#endif\n";
  if (!lib.blobs.empty()) s += "\t.section .rodata.kiln." + lib.name + ",\"a\",%progbits\n";
  for (const DataBlob& blob : lib.blobs) {
    const std::string path = data_dir.empty() ? blob.file_name : data_dir + "/" + blob.file_name;
    s += "\n\t.balign 64\n"
         "\t.globl " + blob.symbol + "\n"
         "\t.hidden " + blob.symbol + "\n"
         "\t.type " + blob.symbol + ", %object\n"
         "\t.size " + blob.symbol + ", " + std::to_string(blob.data.nbytes()) + "\n" +
         blob.symbol + ":\n"
         ".L" + blob.symbol + "_sha256_" + blob.sha256 + ":\n"
         "\t.incbin " + asm_string_literal(path) + "\n";
  }
  // No executable stack for the library that links this object.
  return s + "\n\t.section .note.GNU-stack,\"\",%progbits\n";
}

}  // namespace kiln
