#include "codegen/source.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/constants.h"
#include "codegen/nutpie.h"
#include "codegen/embedded_files.h"
#include "codegen/host_abi.h"
#include "codegen/lowering.h"
#include "codegen/render.h"
#include "codegen/shape_graph.h"
#include "io/output_names.h"
#include "ir/branch_schedule.h"
#include "ir/error.h"
#include "rewrite/inline_op_from_graph.h"
#include "kiln/version.h"

namespace kiln {

namespace {

// A hook of the shared templates: the backend's value, else the C++ backend's. Besides those
// backend.h lists, bind_input_values binds an input whose values a node reads (empty: as
// bind_input) and read_condition reads a lazy node's condition to the host once per call
// (empty: the condition is host data, `.data[0]`).
std::string hook(const Backend& backend, const std::string& key, bool backend_value = true) {
  static const std::map<std::string, std::string> defaults = {{"bind_input", "kg::bind_input"},
                                                              {"bind_input_values", ""},
                                                              {"read_condition", ""},
                                                              {"context_create", "kg::create_context"},
                                                              {"context_destroy", "kg::destroy_context"},
                                                              {"extra_exports", ""}};
  const auto it = backend_value ? backend.template_values.find(key) : backend.template_values.end();
  return it != backend.template_values.end() ? it->second : defaults.at(key);
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
  // The nodes of the user's file it stands for: what the user wrote may be a Dot at /nodes/0
  // where the library runs a Gemv.
  if (node.origins()) s += " (from " + origins_str(node.origins()) + ")";
  return s;
}

// The lines that close the lazy branches `open` has and `next` lacks, then open those `next`
// adds (`open` becomes `next`); empty when there are none. Branch 0 of an IfElse runs when its
// condition is nonzero, branch 1 otherwise. A backend whose condition lives on a device reads it
// to the host once per call with its `read_condition` hook, into `kc_<condition>` (-1 until read;
// the function declares it).
TemplateData branch_transition(RegionPath& open, const RegionPath& next, const LoweredGraph& lg,
                               const std::string& read_condition) {
  std::size_t common = 0;
  while (common < open.size() && common < next.size() && open[common] == next[common]) ++common;
  std::string code;
  for (std::size_t k = open.size(); k > common; --k) code += "  }  // branch " + std::to_string(open[k - 1].second) + "\n";
  for (std::size_t k = common; k < next.size(); ++k) {
    const auto& [lazy, branch] = next[k];
    KILN_INTERNAL_ASSERT(lazy->op().name() == "IfElse", "generated code runs the branches of IfElse only");
    const std::string c = lg.var(lazy->input(0).get()).cname;
    std::string cond = c + ".data[0] != 0";
    if (!read_condition.empty()) {
      code += "  KILN_TRY(" + read_condition + "(ctx, " + c + ", kc_" + c + "));\n";
      cond = "kc_" + c + " != 0";
    }
    code += "  if (" + (branch == 0 ? cond : "!(" + cond + ")") + ") {  // branch " + std::to_string(branch) + "\n";
  }
  open = next;
  return TemplateData(code);  // (ahead of the step's first line)
}

// What a graph's functions put outside them: constants, and the kernels their steps launch.
struct FileScope {
  ConstantSink constants;
  std::vector<std::string> kernels;
  std::vector<std::string> shared;  ///< NodeCode::shared, each distinct text once
  /// compile_weight of each inner function (a Scan's step function) with its own inner ones:
  /// a split build compiles it in the unit of the step that calls it.
  std::map<std::string, double> function_weights;
};

// The steps of a graph function that a split build compiles in a second translation unit
// (driver/build.cpp): their extern "C" trampolines, `symbol_prefix` + fn + "_node" + index.
struct SplitSteps {
  std::string symbol_prefix;
  double fixed_weight = 0;  ///< compile_weight of what the first unit has besides the steps
  struct Step {
    std::string symbol, frame, index;  ///< trampoline, frame type, step
  };
  std::vector<Step> chosen;
};

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The compile time of a piece of generated C++, in arbitrary units: lines^1.5, as a big fused
// step costs more per line than a small one (W7's graph with g++ 12 -O3: its 250-line
// row-block step 0.49 s, a 110-line reduction 0.17 s, a 55-line Elemwise 0.06 s).
double compile_weight(std::size_t lines) { return std::pow(static_cast<double>(lines), 1.5); }

// The biggest steps go to the second unit while it stays under half of everything, the entry
// points, binding and shape function (`fixed_weight`) counting for the first. Each unit parses
// the runtime again (about 0.13 s of g++ time), so a split pays only when the second unit gets
// a large share (kMinSplitWeight, about 0.3 s).
void choose_split_steps(std::vector<TemplateData>& items, const std::vector<double>& weights,
                        const std::string& fn, SplitSteps& split) {
  const double kMinSplitWeight = 2400;
  double total = split.fixed_weight;
  for (double w : weights) total += w;
  std::vector<std::size_t> order(items.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  std::vector<bool> chosen(items.size(), false);
  double second = 0;
  for (std::size_t k : order)
    if (2 * (second + weights[k]) <= total) second += weights[k], chosen[k] = true;
  if (second < kMinSplitWeight) return;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (!chosen[k]) continue;
    const std::string index = items[k].get("index")->string_value();
    const std::string symbol = split.symbol_prefix + fn + "_node" + index;
    items[k].set("split", true);
    items[k].set("symbol", symbol);
    split.chosen.push_back({symbol, fn + "_frame", index});
  }
}

// One generated function: bind inputs and constants, run every node, copy outputs. A step
// function binds its inputs as the function that calls it passes them: with the backend's
// usual binding, not a graph entry's (a GPU shape function gets device tensors from the
// caller, but its Scan passes host rows to its step function).
std::string emit_function(const Backend& backend, const LoweredGraph& lg, const std::string& fn,
                          const std::string& comment, FileScope& scope, bool step_function = false,
                          SplitSteps* split = nullptr, bool cold = false) {
  const FunctionGraph& fg = *lg.graph;
  TemplateData data;
  data.set("fn", fn);
  data.set("cold", cold);
  data.set("comment", comment);
  data.set("bind_input", hook(backend, "bind_input", !step_function));
  const auto type_of = [&](const Variable& v) { return backend.tensor_type ? backend.tensor_type(v) : tensor_type(v); };
  TemplateData vars{TemplateData::type::list};
  for (const Variable* v : lg.declared) {
    TemplateData item;
    item.set("type", type_of(*v));
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
    // An input whose values a node reads (not only its shape) may need a binding of its own
    // (a GPU backend's shape function copies it to the host: Nonzero's count, Repeat's counts).
    const std::string values = hook(backend, "bind_input_values", !step_function);
    const auto& clients = fg.clients(&v);
    if (!values.empty() && std::any_of(clients.begin(), clients.end(), [](const Client& c) {
          return c.node && c.node->op().name() != "Shape" && c.node->op().name() != "Shape_i";
        }))
      item.set("bind_input", values);
    inputs.push_back(item);
  }
  data.set("inputs", inputs);

  TemplateData constants{TemplateData::type::list};
  for (std::size_t i = 0; i < lg.constants.size(); ++i) {
    const Variable& v = *lg.constants[i];
    std::string array = add_constant(scope.constants, fn, i, v.value());
    TemplateData item;
    item.set("name", lg.var(&v).cname);
    item.set("ctype", ctype(v.dtype()));
    item.set("array", array);
    item.set("opaque", v.value().size() > 1);  // kg::opaque: GCC 12's AVX-512 constant-copy bug
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

  std::vector<TemplateData> step_items;
  std::vector<double> step_weights;  // each step's compile_weight, for choose_split_steps
  const auto add_step = [&](TemplateData& item, const std::string& code, const Apply& node,
                            const std::string& shared = {}) {
    item.set("code", code);
    item.set("split", false);
    step_items.push_back(item);
    // A step that calls shared code (NodeCode::shared) weighs as if it held it: whichever unit
    // takes the step compiles that code (once per unit, however many of its steps call it).
    double weight = compile_weight(line_count(code) + line_count(shared));
    const auto inner = lg.inner_functions.find(&node);
    if (inner != lg.inner_functions.end())
      for (const std::string& f : inner->second) weight += scope.function_weights[f];
    step_weights.push_back(weight);
  };
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
    item.set("regions", branch_transition(open_regions, r == regions.end() ? RegionPath{} : r->second, lg,
                                          hook(backend, "read_condition")));
  };
  // The host copies of lazy nodes' conditions (backends with a read_condition hook).
  TemplateData conditions{TemplateData::type::list};
  if (!hook(backend, "read_condition").empty()) {
    std::set<std::string> seen;
    for (const Apply* node : lg.order) {
      if (node->op().lazy_branches().empty() || !seen.insert(lg.var(node->input(0).get()).cname).second) continue;
      TemplateData item;
      item.set("name", "kc_" + lg.var(node->input(0).get()).cname);
      conditions.push_back(item);
    }
  }
  data.set("conditions", conditions);
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
      add_step(item, indent_lines(backend.row_block(g, lg, static_cast<int>(i), where), "    "), node);
      continue;
    }
    if (lg.fused_gathers.count(&node)) continue;  // its reader computes it (gather_fusion.h)
    backend.check_dtypes(node);
    const OpEmitter& entry = backend.emitter(node.op());
    NodeEmitContext ctx(node, lg, static_cast<int>(i), scope.constants.prefix + "_" + fn);
    std::string label = node_label(node, static_cast<int>(i));
    std::vector<std::string> outs;
    for (int o = 0; o < node.num_outputs(); ++o) outs.push_back(lg.var(node.output_ptr(o)).cname);
    NodeCode code = entry.emit(ctx);
    if (!code.kernels.empty()) scope.kernels.push_back(code.kernels);
    if (!code.shared.empty() && std::find(scope.shared.begin(), scope.shared.end(), code.shared) == scope.shared.end())
      scope.shared.push_back(code.shared);
    TemplateData item;
    enter(node, item);
    item.set("index", std::to_string(i));
    item.set("comment", comment_text(node.op().str(), 100) + " -> " + join(outs, ", "));
    item.set("where", c_string_literal(label));
    add_step(item, indent_lines(code.host, "    "), node, code.shared);
  }
  KILN_INTERNAL_ASSERT(open_regions.empty(), "a lazy branch is still open after the last step");
  if (split) choose_split_steps(step_items, step_weights, fn, *split);
  data.set("frame", split && !split->chosen.empty());
  TemplateData steps{TemplateData::type::list};
  for (const TemplateData& item : step_items) steps.push_back(item);
  data.set("steps", steps);

  TemplateData copies{TemplateData::type::list};
  for (const auto& copy : lg.copies) {
    TemplateData item;
    item.set("k", std::to_string(copy.output_index));
    item.set("source", lg.var(copy.source).cname);
    item.set("type", type_of(*copy.source));
    item.set("ndim", std::to_string(copy.source->ndim()));
    item.set("dl", dl_dtype_literal(copy.source->dtype()));
    copies.push_back(item);
  }
  data.set("copies", copies);
  return render_template(
      backend.function_template.empty() ? backend.templates + "/function.mustache" : backend.function_template, data);
}

// The functions the nodes of `lg` call for their inner graphs (InnerGraphUse::function: a Scan's
// step), each lowered with slots from `next_slot` on and emitted — its own inner functions
// first — into `functions`, named after `fn`. Their names go to lg.inner_functions.
void emit_inner_functions(const Backend& backend, LoweredGraph& lg, const std::string& fn, int& next_slot,
                          FileScope& scope, std::vector<std::string>& functions, bool& needs_blas) {
  int count = 0;
  for (Apply* node : lg.order) {
    for (const InnerGraphUse& use : node->op().inner_graphs()) {
      if (!use.function) continue;
      const std::optional<FunctionGraph> inlined = inlined_copy(*use.function);
      const FunctionGraph& inner = inlined ? *inlined : *use.function;
      const std::string name = fn + "_" + c_identifier(use.role) + std::to_string(count++);
      LoweredGraph inner_lg = lower_for_backend(backend, inner, next_slot, true);
      next_slot += inner_lg.num_slots;
      emit_inner_functions(backend, inner_lg, name, next_slot, scope, functions, needs_blas);
      for (Apply* n : inner_lg.order) needs_blas = needs_blas || backend.emitter(n->op()).needs_blas;
      functions.push_back(emit_function(backend, inner_lg, name,
                                        "The " + comment_text(use.role) + " function of " +
                                            comment_text(node->op().str(), 100) + ", called once per step.",
                                        scope, true));
      double& weight = scope.function_weights[name];
      weight = compile_weight(line_count(functions.back()));
      for (const auto& [inner_node, names] : inner_lg.inner_functions)
        for (const std::string& f : names) weight += scope.function_weights[f];
      lg.inner_functions[node].push_back(name);
    }
  }
}

// Everything one graph contributes to a source file: its constants, kernels, functions,
// metadata and extern "C" entry points (graph_impl.cpp.mustache).
struct GraphCode {
  std::string impl;
  std::vector<std::string> kernels;  ///< kernels_in_program: device code, kept apart
  std::vector<DataBlob> blobs;
  bool needs_blas = false;
  bool two_part = false;  ///< GeneratedLibrary::two_part
};

// The kiln_kind of each variable (kiln.h): an rng's uint64[6] state is marked as one. A
// trailing 0 keeps the array non-empty when there are no variables.
std::string abi_kinds(const VarList& vars) {
  std::vector<std::string> kinds;
  for (const auto& v : vars) kinds.push_back(v->type().kind == TypeKind::Rng ? "KILN_KIND_RNG" : "KILN_KIND_TENSOR");
  kinds.push_back("0");
  return join(kinds, ", ");
}

GraphCode generate_graph_code(const Backend& backend, const FunctionGraph& graph, const std::string& name) {
  // Code generation has no OpFromGraph: a graph compiled without rewriting is inlined here.
  const std::optional<FunctionGraph> inlined = inlined_copy(graph);
  const FunctionGraph& fg = inlined ? *inlined : graph;
  const Backend& shapes = backend.shape_backend ? *backend.shape_backend : backend;
  LoweredGraph main_lg = lower_for_backend(backend, fg, 0, true);
  FunctionGraph shape_fg = build_shape_graph(fg);
  LoweredGraph shape_lg = lower_for_backend(shapes, shape_fg, main_lg.num_slots, false);

  FileScope scope;
  scope.constants.prefix = name;
  GraphCode code;
  int next_slot = main_lg.num_slots + shape_lg.num_slots;
  std::vector<std::string> functions;
  emit_inner_functions(backend, main_lg, "run_graph", next_slot, scope, functions, code.needs_blas);
  emit_inner_functions(shapes, shape_lg, "run_shapes", next_slot, scope, functions, code.needs_blas);
  const auto emit_shape_function = [&](FileScope& into) {
    // Cold: only NAME_output_shapes, a query, runs it. GCC then optimises it for size, which
    // takes a unit with it 7 % less compile time (W7's first unit: 2.91 -> 2.70 G instructions).
    return emit_function(shapes, shape_lg, "run_shapes",
                         "The output shapes of the graph, computed from the inputs (the shape graph).", into,
                         false, nullptr, true);
  };
  // The first unit of a split build also has the entry points and input binding (0.19 s of
  // W7's 0.32 s beside the runtime's parse) and the shape function with its inner functions.
  SplitSteps split;
  if (backend.split_steps) {
    const double kEntryPointWeight = 1500;
    split.symbol_prefix = "kiln_" + name + "_";
    FileScope probe = scope;  // the shape function's size (emitted for real after run_graph's)
    split.fixed_weight = kEntryPointWeight + compile_weight(line_count(emit_shape_function(probe)));
    for (const auto& [node, names] : shape_lg.inner_functions)
      for (const std::string& f : names) split.fixed_weight += scope.function_weights[f];
  }
  std::string main_fn = emit_function(backend, main_lg, "run_graph", "The graph " + comment_text(fg.name()) + ".",
                                      scope, false, backend.split_steps ? &split : nullptr);
  code.two_part = !split.chosen.empty();
  std::string shape_fn = emit_shape_function(scope);
  for (Apply* node : main_lg.order) code.needs_blas = code.needs_blas || backend.emitter(node->op()).needs_blas;
  for (Apply* node : shape_lg.order) code.needs_blas = code.needs_blas || shapes.emitter(node->op()).needs_blas;

  std::vector<std::string> input_names, output_names;
  for (const auto& in : fg.inputs()) input_names.push_back(in->name().empty() ? in->file_id() : in->name());
  for (std::size_t k = 0; k < fg.outputs().size(); ++k) output_names.push_back(output_display_name(fg, k));

  TemplateData src;
  src.set("name", name);
  src.set("kiln_version", KILN_VERSION_STRING);
  src.set("graph_name_comment", c_string_literal(comment_text(fg.name())));
  src.set("constants", string_list(scope.constants.arrays));
  functions.push_back(main_fn);
  functions.push_back(shape_fn);
  src.set("functions", string_list(functions));
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
  src.set("num_slots", std::to_string(next_slot));
  src.set("name_literal", c_string_literal(name));
  src.set("graph_name_literal", c_string_literal(fg.name()));
  src.set("context_create", hook(backend, "context_create"));
  src.set("context_destroy", hook(backend, "context_destroy"));
  const std::string extra = hook(backend, "extra_exports");
  src.set("extra_exports", extra.empty() ? "" : render_template(extra, src));
  TemplateData trampolines{TemplateData::type::list};
  for (const SplitSteps::Step& step : split.chosen) {
    TemplateData item;
    item.set("symbol", step.symbol);
    item.set("frame", step.frame);
    item.set("index", step.index);
    trampolines.push_back(item);
  }
  src.set("split_steps", trampolines);
  src.set("two_part", code.two_part);
  code.impl = render_template(backend.impl_template.empty() ? backend.templates + "/graph_impl.cpp.mustache"
                                                            : backend.impl_template,
                              src);
  if (backend.kernels_in_program)
    code.kernels = std::move(scope.kernels);
  else if (!scope.kernels.empty())
    code.impl = join(scope.kernels, "\n") + "\n" + code.impl;
  if (!scope.shared.empty()) code.impl = join(scope.shared, "\n") + "\n" + code.impl;
  if (!scope.constants.declarations.empty())
    code.impl = "// Large constants of " + name + ", defined in " + name + "_data.S.\n" +
                join(scope.constants.declarations, "") + "\n" + code.impl;
  code.blobs = std::move(scope.constants.blobs);
  return code;
}

void add_includes(std::vector<std::string>& all, const std::vector<std::string>& more) {
  for (const auto& inc : more)
    if (std::find(all.begin(), all.end(), inc) == all.end()) all.push_back(inc);
}

// The source file around one or more graphs: includes, the ABI, the runtime prologue.
std::string source_file(const Backend& backend, const std::string& file_name, const std::string& description,
                        const std::vector<std::string>& headers, const std::vector<std::string>& graph_impls,
                        const std::vector<std::string>& kernels) {
  std::vector<std::string> includes = {"#include <cmath>", "#include <cstdint>", "#include <cstring>", "#include <limits>"};
  // File-scope declarations that depend on the code (the cpp backend's SIMD declarations of
  // libm functions: ahead of every use, so that loops calling them vectorise).
  EmbeddedText declarations;
  if (!backend.declarations.file.empty()) {
    declarations = split_embedded(backend.declarations.file);
    add_includes(includes, declarations.includes);
  }
  std::vector<std::string> bodies;
  for (const auto& piece : backend.prologue) {
    EmbeddedText e = split_embedded(piece);
    add_includes(includes, e.includes);
    bodies.push_back(e.body);
  }
  for (const auto& optional : backend.optional_prologue) {
    std::vector<std::string> files;
    if (optional.select)
      files = optional.select(graph_impls);
    else if (std::any_of(graph_impls.begin(), graph_impls.end(),
                         [&](const std::string& code) { return code.find(optional.marker) != std::string::npos; }))
      files = optional.files;
    if (files.empty()) continue;
    if (!optional.before.empty()) bodies.push_back(optional.before);
    for (const auto& piece : files) {
      EmbeddedText e = split_embedded(piece);
      add_includes(includes, e.includes);
      bodies.push_back(e.body);
    }
    if (!optional.after.empty()) bodies.push_back(optional.after);
  }
  TemplateData src;
  src.set("file_name", file_name);
  src.set("description", description);
  src.set("kiln_version", KILN_VERSION_STRING);
  src.set("headers", string_list(headers));
  src.set("includes", string_list(includes));
  src.set("abi_header", std::string(embedded_file("runtime/include/kiln/kiln.h")));
  src.set("prologue", join(bodies, "\n"));
  src.set("vector_math", backend.declarations.file.empty() ? "" : backend.declarations.select(declarations.body, graph_impls));
  src.set("graphs", string_list(graph_impls));
  // The device functions the kernels call: OpenCL's kernels are the program's, CUDA's are in
  // the graphs' code.
  std::string device_prelude = backend.device_prelude;
  if (backend.device_functions) {
    const std::string more = backend.device_functions(backend.kernels_in_program ? kernels : graph_impls);
    if (!more.empty()) device_prelude += "\n" + more;
  }
  if (backend.kernels_in_program)
    src.set("device_program", c_string_literal(device_prelude + "\n" + join(kernels, "\n")));
  else
    src.set("device_prelude", device_prelude);
  return render_template(backend.templates + "/graph.cpp.mustache", src);
}

}  // namespace

GeneratedLibrary generate_bundle(const Backend& backend,
                                 const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                                 const std::string& name) {
  GeneratedLibrary lib;
  lib.name = c_identifier(name);
  lib.backend = backend.name;
  lib.source_file = lib.name + backend.toolchain.source_suffix;
  std::vector<std::string> impls, kernels;
  std::vector<bool> split;
  for (const auto& [fg, graph_name] : graphs) {
    GraphCode code = generate_graph_code(backend, *fg, c_identifier(graph_name));
    impls.push_back(code.impl);
    split.push_back(code.two_part);
    kernels.insert(kernels.end(), code.kernels.begin(), code.kernels.end());
    lib.needs_blas = lib.needs_blas || code.needs_blas;
    lib.two_part = lib.two_part || code.two_part;
    for (auto& blob : code.blobs) lib.blobs.push_back(std::move(blob));
  }
  // In a two-part bundle, a graph with no split steps belongs to the first unit whole.
  for (std::size_t k = 0; k < impls.size(); ++k)
    if (lib.two_part && !split[k]) impls[k] = "#if KILN_PART != 2\n" + impls[k] + "#endif  // KILN_PART != 2\n";
  lib.source = source_file(backend, lib.source_file, std::to_string(graphs.size()) + " graphs", {}, impls, kernels);
  return lib;
}

GeneratedLibrary generate_library(const Backend& backend, const FunctionGraph& fg, const std::string& name_override,
                                  const ExtraEntryPoints& extra) {
  GeneratedLibrary lib;
  lib.name = c_identifier(name_override.empty() ? fg.name() : name_override);
  lib.backend = backend.name;
  lib.source_file = lib.name + backend.toolchain.source_suffix;
  if (extra.nutpie_logp) check_nutpie_graph(fg, backend);
  GraphCode code = generate_graph_code(backend, fg, lib.name);
  lib.needs_blas = code.needs_blas;
  lib.two_part = code.two_part;
  lib.blobs = std::move(code.blobs);
  lib.source = source_file(backend, lib.source_file, "the graph " + c_string_literal(comment_text(fg.name())),
                           {lib.name + ".h"}, {code.impl}, code.kernels);
  std::string declarations;
  if (extra.nutpie_logp) {
    // Entry points are the first unit's (a split build's second has only steps).
    lib.source += lib.two_part ? "#if KILN_PART != 2\n" + nutpie_entry_point_source(backend, lib.name) + "#endif\n"
                               : nutpie_entry_point_source(backend, lib.name);
    declarations += nutpie_entry_point_declarations(lib.name);
  }
  lib.header = graph_header(fg, lib.name, declarations);
  lib.main_program = main_program(fg, lib.name);
  return lib;
}

}  // namespace kiln
