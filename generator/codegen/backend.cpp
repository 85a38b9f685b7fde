#include "codegen/backend.h"

#include <mutex>

#include "codegen/cpp/backend.h"
#include "codegen/gpu/backend.h"
#include "codegen/gather_fusion.h"
#include "ir/error.h"

namespace kiln {

namespace {

// The registry: the built-in backends, then any a program adds. Filled on first use (no static
// initialisers, which vanish from static archives). A built-in backend is made when first asked
// for by name: building the GPU backends' kernel text costs every kiln command otherwise.
struct RegistryEntry {
  std::string name;
  std::shared_ptr<const Backend> (*make)();  // null once made, and for added backends
  std::shared_ptr<const Backend> backend;

  const Backend* get() {
    if (!backend) backend = make();
    return backend.get();
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<RegistryEntry> entries;
  std::size_t builtin = 0;
};

Registry& registry() {
  static Registry* r = [] {
    auto* init = new Registry;  // never destroyed: backends may be looked up during exit
    init->entries.push_back({"cpp", make_cpp_backend, nullptr});
    init->entries.push_back({"opencl", make_opencl_backend, nullptr});
    init->entries.push_back({"cuda", make_cuda_backend, nullptr});
    init->builtin = init->entries.size();
    return init;
  }();
  return *r;
}

const char* on_off(bool b) { return b ? "ON" : "OFF"; }

}  // namespace

LoweredGraph lower_for_backend(const Backend& backend, const FunctionGraph& fg, int first_slot, bool schedules) {
  const auto is_view = [&](const Apply& node) { return backend.is_view(node); };
  const auto needs_scratch = [&](const Apply& node) { return backend.needs_scratch(node); };
  std::vector<RowBlockGroup> groups;
  std::unordered_set<const Apply*> gathers;
  if (schedules && backend.row_block) groups = find_row_block_groups(fg);
  if (schedules && backend.fuse_gathers) {
    std::unordered_set<const Apply*> grouped;
    for (const auto& g : groups) grouped.insert(g.nodes.begin(), g.nodes.end());
    gathers = find_fused_gathers(fg, grouped);
  }
  return lower(fg, is_view, first_slot, std::move(groups), needs_scratch, std::move(gathers));
}

const OpEmitter* Backend::find(std::string_view op_name) const {
  for (const auto& e : ops)
    if (e.op_name == op_name) return &e;
  return nullptr;
}

const OpEmitter& Backend::emitter(const Op& op) const {
  if (const OpEmitter* e = find(op.name())) return *e;
  std::string message = "`" + op.str() + "` has no " + name + " implementation";
  for (const auto& u : unsupported)
    if (u.op_name == op.name()) message += " (" + std::string(u.reason) + ")";
  throw NotImplementedError(message);
}

void Backend::check_dtypes(const Apply& node) const {
  if (unsupported_dtypes.empty()) return;
  const auto check = [&](const Variable& v) {
    for (const auto& u : unsupported_dtypes)
      if (v.type().is_tensor() && v.dtype() == u.dtype)
        throw NotImplementedError("`" + node.op().str() + "`: variable \"" + (v.name().empty() ? v.file_id() : v.name()) +
                                  "\" is " + std::string(dtype_name(u.dtype)) +
                                  ", which the " + name + " backend does not have (" + std::string(u.reason) + ")");
  };
  for (const auto& in : node.inputs()) check(*in);
  for (const auto& out : node.outputs()) check(*out);
}

const Backend& find_backend(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string known;
  for (auto& e : r.entries) {
    if (e.name == name) return *e.get();
    known += (known.empty() ? "" : ", ") + e.name;
  }
  throw UserError("unknown backend \"" + name + "\" (kiln has: " + known + ")");
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> out;
  for (const auto& e : r.entries) out.push_back(e.name);
  return out;
}

std::vector<const Backend*> backends() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const Backend*> out;
  for (auto& e : r.entries) out.push_back(e.get());
  return out;
}

std::vector<const Backend*> builtin_backends() {
  std::vector<const Backend*> all = backends();
  all.resize(registry().builtin);
  return all;
}

std::string backends_cmake() {
  std::string names, vars;
  for (const Backend* b : builtin_backends()) {
    names += (names.empty() ? "" : " ") + b->name;
    const std::string v = "set(KILN_BACKEND_" + b->name + "_";
    const Toolchain& t = b->toolchain;
    vars += "\n# " + b->description + "\n" + v + "SUFFIX " + t.source_suffix + ")\n" + v + "LANGUAGE " + t.language +
            ")\n" + v + "OPENMP " + on_off(t.openmp) + ")\n" + v + "VECTOR_MATH " + on_off(t.vector_math) + ")\n" + v +
            "BLAS " + on_off(t.blas) + ")\n" + v + "LIBRARIES " + t.libraries + ")\n" + v + "BLAS_LIBRARIES " +
            t.blas_libraries + ")\n" + v + "LINALG_LIBRARIES " + t.linalg_libraries + ")\n";
  }
  return "# kiln's backends as kiln_add_graph(... BACKEND NAME) builds them: generated by `kiln backends\n"
         "# --cmake` from the backend registry (generator/codegen/backend.h). Do not edit: scripts/update-golden\n"
         "# rewrites it and the op_coverage test checks it.\n"
         "set(KILN_BACKENDS " + names + ")\n" + vars;
}

void register_backend(std::shared_ptr<const Backend> backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& e : r.entries)
    if (e.name == backend->name) throw UserError("a backend named \"" + backend->name + "\" is registered already");
  const std::string name = backend->name;
  r.entries.push_back({name, nullptr, std::move(backend)});
}

}  // namespace kiln
