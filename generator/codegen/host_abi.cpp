#include "codegen/host_abi.h"

#include <cctype>
#include <set>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/embedded_files.h"
#include "io/output_names.h"
#include "kiln/kiln.h"
#include "kiln/version.h"

namespace kiln {

namespace {

std::vector<std::string> input_names(const FunctionGraph& fg) {
  std::vector<std::string> names;
  for (const auto& in : fg.inputs()) names.push_back(in->name().empty() ? in->file_id() : in->name());
  return names;
}

std::vector<std::string> output_names(const FunctionGraph& fg) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < fg.outputs().size(); ++k) names.push_back(output_display_name(fg, k));
  return names;
}

}  // namespace

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

namespace {

// A variable's type for NAME.h's comments; an rng says what its state is.
std::string type_comment(const Var& v) {
  return v->type().str() + (v->type().kind == TypeKind::Rng ? " (a uint64[6] PCG64 state, kiln.h)" : "");
}

}  // namespace

std::string graph_header(const FunctionGraph& fg, const std::string& name, const std::string& extra_declarations) {
  const std::vector<std::string> in_names = input_names(fg), out_names = output_names(fg);
  TemplateData hdr;
  hdr.set("name", name);
  hdr.set("kiln_version", KILN_VERSION_STRING);
  hdr.set("graph_name_comment", c_string_literal(comment_text(fg.name())));
  std::string guard;
  for (char ch : name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  hdr.set("guard", guard);
  hdr.set("extra_declarations", extra_declarations);
  hdr.set("abi_header", std::string(embedded_file("runtime/include/kiln/kiln.h")));
  hdr.set("abi_version", std::to_string(KILN_ABI_VERSION));
  EmbeddedText cpp_layer = split_embedded("runtime/include/kiln/kiln.hpp");
  hdr.set("cpp_header", join(cpp_layer.includes, "\n") + "\n" + cpp_layer.body);
  std::vector<std::string> in_comments, out_comments;
  for (std::size_t k = 0; k < fg.inputs().size(); ++k)
    in_comments.push_back(comment_text(in_names[k], 40) + " " + type_comment(fg.inputs()[k]));
  for (std::size_t k = 0; k < fg.outputs().size(); ++k)
    out_comments.push_back(comment_text(out_names[k], 40) + " " + type_comment(fg.outputs()[k]));
  hdr.set("input_list", in_comments.empty() ? "none" : join(in_comments, ", "));
  hdr.set("output_list", out_comments.empty() ? "none" : join(out_comments, ", "));

  std::set<std::string> reserved = {"ctx_", "ins", "outs", "status", "f", "name", "kiln"};
  std::vector<std::string> params = unique_c_identifiers(in_names, "input", reserved);
  std::set<std::string> taken_members;
  std::vector<std::string> members = unique_c_identifiers(out_names, "output", taken_members);
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
  return render_template("templates/host/graph.h.mustache", hdr);
}

std::string main_program(const FunctionGraph& fg, const std::string& name) {
  TemplateData mainp;
  mainp.set("name", name);
  mainp.set("kiln_version", KILN_VERSION_STRING);
  std::vector<std::string> main_includes = {"#include <cstdio>", "#include <cstdlib>", "#include <string>", "#include <vector>"};
  std::string npy_body;
  for (const char* path : {"runtime/include/kiln/runtime/half.hpp", "runtime/include/kiln/runtime/complex.hpp",
                           "runtime/include/kiln/runtime/dtype.hpp",
                           "runtime/include/kiln/runtime/array.hpp",
                           "runtime/include/kiln/runtime/npy.hpp", "runtime/include/kiln/runtime/array_print.hpp"}) {
    EmbeddedText e = split_embedded(path);
    for (const auto& inc : e.includes)
      if (std::find(main_includes.begin(), main_includes.end(), inc) == main_includes.end()) main_includes.push_back(inc);
    npy_body += e.body;
  }
  mainp.set("includes", string_list(main_includes));
  mainp.set("npy_runtime", npy_body);
  std::vector<std::string> files;
  for (const auto& f : output_file_names(fg)) files.push_back(c_string_literal(f));
  if (files.empty()) files.push_back("\"\"");
  mainp.set("output_files", join(files, ", "));
  return render_template("templates/host/main.cpp.mustache", mainp);
}

}  // namespace kiln
