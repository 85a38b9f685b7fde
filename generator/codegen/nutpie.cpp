#include "codegen/nutpie.h"

#include <algorithm>

#include "codegen/embedded_files.h"
#include "codegen/render.h"
#include "ir/error.h"

namespace kiln {

namespace {

std::string template_path(const Backend& backend) { return backend.templates + "/nutpie_logp.mustache"; }

bool has_template(const Backend& backend) {
  const std::string path = template_path(backend);
  const auto& files = embedded_files();
  return std::any_of(files.begin(), files.end(), [&](const EmbeddedFile& f) { return f.path == path; });
}

bool is_f64(const TensorType& t, int ndim) { return t.is_tensor() && t.dtype == DType::Float64 && t.ndim() == ndim; }

}  // namespace

void check_nutpie_graph(const FunctionGraph& fg, const Backend& backend) {
  if (!has_template(backend))
    throw UserError("the nutpie entry point (--nutpie) reads and writes host memory; the " + backend.name +
                    " backend does not generate it (use --backend cpp)");
  auto types = [](const VarList& vars) {
    std::string out;
    for (const auto& v : vars) out += (out.empty() ? "" : ", ") + v->type().str();
    return out.empty() ? std::string("none") : out;
  };
  const VarList& ins = fg.inputs();
  const VarList& outs = fg.outputs();
  const bool shape_ok = ins.size() == 1 && is_f64(ins[0]->type(), 1) && outs.size() == 2 &&
                        is_f64(outs[0]->type(), 0) && is_f64(outs[1]->type(), 1);
  if (!shape_ok)
    throw UserError("the nutpie entry point (--nutpie) needs a graph x -> (logp, gradient): one float64 vector "
                    "input and two outputs, a float64 scalar and a float64 vector; graph \"" +
                    fg.name() + "\" has inputs (" + types(ins) + ") and outputs (" + types(outs) + ")");
  const std::int64_t n_in = ins[0]->type().shape[0], n_grad = outs[1]->type().shape[0];
  if (n_in != kUnknownLength && n_grad != kUnknownLength && n_in != n_grad)
    throw UserError("the nutpie entry point (--nutpie) needs a gradient as long as x; graph \"" + fg.name() +
                    "\" has x of length " + std::to_string(n_in) + " and a gradient of length " +
                    std::to_string(n_grad));
}

std::string nutpie_entry_point_source(const Backend& backend, const std::string& name) {
  TemplateData data;
  data.set("name", name);
  return render_template(template_path(backend), data);
}

std::string nutpie_entry_point_declarations(const std::string& name) {
  return "/** nutpie's logp callback (kiln compile --nutpie): logp and its gradient at x, on a context of the\n"
         "    calling thread's own; user_data is not read. 0, or nutpie's codes: 3 and 4 a non-finite gradient\n"
         "    or logp, 7/8/9/13 the graph failed here (recoverable; " + name + "_nutpie_last_error() says why), < 0\n"
         "    a wrong dim, pointer or layout. */\n"
         "KILN_EXPORT int64_t " + name + "_nutpie_logp(uint64_t dim, const double* x, double* grad, double* logp, "
         "void* user_data);\n"
         "/** The calling thread's last message from " + name + "_nutpie_logp (\"\" after a success). */\n"
         "KILN_EXPORT const char* " + name + "_nutpie_last_error(void);\n";
}

}  // namespace kiln
