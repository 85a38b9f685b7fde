// The backend seam: what a code generator for one target supplies, as data (tinygrad keeps
// backends as data the same way). A backend is its op -> emitter registry (one line per op),
// the templates folder of its host code, the runtime prologue pieces every source embeds, the
// rewrites it can compile (capabilities), and its toolchain (how the driver and CMake build
// its sources). Everything else — lowering and the memory plan, the C ABI and NAME.h,
// constants and NAME_data.S, statistics — is shared (codegen/source.h, host_header.h,
// constants.h, stats.h). The registry lists the built-in backends; tests may add their own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/emit_context.h"
#include "codegen/toolchain.h"
#include "ir/op.h"

namespace kiln {

/// What one node's emitter produces. `host` runs as the node's step in the graph function, in
/// toposort order; `kernels` are file-scope definitions the step uses (a device backend's
/// kernels; empty on the CPU, where the step is the kernel). An emitter returning a string
/// gives host code only.
struct NodeCode {
  NodeCode(std::string host_code = {}, std::string kernel_code = {})
      : host(std::move(host_code)), kernels(std::move(kernel_code)) {}
  std::string host;
  std::string kernels;
  /// Host code at file scope, before the graph's functions; nodes share a piece by emitting
  /// the same text, which the file then holds once (the cpp backend's reduction folds).
  std::string shared;
};

using EmitFn = std::function<NodeCode(const NodeEmitContext&)>;

/// One line of a backend's registry.
struct OpEmitter {
  std::string_view op_name;  ///< Op::name()
  EmitFn emit;
  bool is_view = false;      ///< output 0 always aliases input 0 (no storage of its own)
  bool needs_blas = false;   ///< the generated code calls BLAS (the toolchain links it)
  bool needs_scratch = false;  ///< the node keeps work buffers in a context slot of its own
};

/// An op kind a backend declares it lacks, and why (listed in docs/op_coverage.md).
struct UnsupportedOp {
  std::string_view op_name;
  std::string_view reason;
};

/// An element type a backend declares it lacks, and why.
struct UnsupportedDType {
  DType dtype;
  std::string_view reason;
};

struct Backend {
  std::string name;         ///< what --backend and kiln_add_graph(BACKEND) name
  std::string description;  ///< one line for --help and docs/op_coverage.md
  std::vector<OpEmitter> ops;
  std::vector<UnsupportedOp> unsupported;
  /// Element types its functions cannot hold: a variable of one is a NotImplementedError
  /// naming it (check_dtypes).
  std::vector<UnsupportedDType> unsupported_dtypes;
  /// Folder of the host templates: function.mustache (one graph function), graph_impl.cpp.mustache
  /// (a graph's ABI entry points), graph.cpp.mustache (the source file around them).
  std::string templates;
  /// Embedded files whose bodies form the source's runtime prologue, in order (their <system>
  /// includes are hoisted to the top of the file).
  std::vector<std::string> prologue;
  /// Prologue pieces embedded only where some graph needs them, after `prologue`, in order:
  /// either `files` when some graph's code contains `marker` (the cpp backend's LAPACK
  /// declarations and linear-algebra kernels, for graphs calling kg::linalg::), or what
  /// `select` picks from the graphs' code (the special functions they call). `before` and
  /// `after` surround the pieces when any are embedded (NumPy's Generator: no fp contraction).
  struct OptionalPrologue {
    std::string marker;
    std::vector<std::string> files;
    std::function<std::vector<std::string>(const std::vector<std::string>& graph_code)> select;
    std::string before, after;
  };
  std::vector<OptionalPrologue> optional_prologue;
  /// File-scope declarations ahead of the prologue that depend on the graphs' code: an embedded
  /// file and what to keep of its body given the graphs' code (the cpp backend's SIMD
  /// declarations of the libm functions they call). No file: none.
  struct Declarations {
    std::string file;
    std::function<std::string(const std::string& body, const std::vector<std::string>& graph_code)> select;
  } declarations;
  /// A row-block group (codegen/row_block_fusion.h) as one step; empty: the backend does not
  /// run that schedule and lowers nodes one by one.
  std::function<std::string(const RowBlockGroup&, const LoweredGraph&, int step,
                            const std::function<std::string(const Apply&)>& where)>
      row_block;
  /// The Elemwise emitter computes a gather its node alone reads inside its own loop
  /// (codegen/gather_fusion.h): such gathers get no step of their own.
  bool fuse_gathers = false;
  /// Its graph function can put its biggest steps in a second translation unit
  /// (function.mustache's frame; GeneratedLibrary::two_part).
  bool split_steps = false;
  /// The operand classes its scalar op table spells `name` for ("float", "int", "bool", "any"):
  /// what docs/op_coverage.md lists; empty when it has no spelling.
  std::function<std::vector<std::string>(const std::string& scalar_op)> scalar_classes;
  /// Rewrite passes needing a capability run only for backends that have it ("blas": the
  /// BLAS pass introduces Gemv, Gemm and Ger).
  std::vector<std::string> capabilities;
  Toolchain toolchain;

  // Device backends (codegen/gpu/): what differs from a CPU backend's source file.
  /// The C++ type of a variable in the graph function (empty: kg::Tensor<T, N>, c_types.h).
  std::function<std::string(const Variable&)> tensor_type;
  /// The backend whose emitters and templates compile the shape function (null: this one). A
  /// device backend computes output shapes on the host, where shapes live.
  std::shared_ptr<const Backend> shape_backend;
  /// Values of the hooks in the shared templates, over source.cpp's defaults: bind_input,
  /// context_create, context_destroy (host runtime functions), extra_exports (a template
  /// rendered with graph_impl's data: more extern "C" entry points).
  std::map<std::string, std::string> template_values;
  /// The graph_impl and function templates when not those in `templates`.
  std::string impl_template, function_template;
  /// Device code every source starts with (a GPU dialect's prelude and shared kernels).
  std::string device_prelude;
  /// Device functions a source embeds after device_prelude only where its device code calls
  /// them (the GPU special functions): what to add given that code. Null: nothing.
  std::function<std::string(const std::vector<std::string>& device_code)> device_functions;
  /// Kernels are compiled at run time from one string (OpenCL): device_prelude and every
  /// graph's kernels become the file template's `device_program` (a C string literal) instead
  /// of file-scope code.
  bool kernels_in_program = false;

  /// The registry entry for an op, or null.
  const OpEmitter* find(std::string_view op_name) const;
  /// The entry for a node's op; NotImplementedError "`Op{props}` has no <name> implementation"
  /// (with the reason when the backend declares one) when it has none.
  const OpEmitter& emitter(const Op& op) const;
  /// NotImplementedError naming the first variable `node` reads or writes whose dtype is one
  /// of unsupported_dtypes.
  void check_dtypes(const Apply& node) const;
  bool is_view(const Apply& node) const { return emitter(node.op()).is_view; }
  bool needs_scratch(const Apply& node) const { return emitter(node.op()).needs_scratch; }
};

/// `fg` lowered for `backend` (slots from `first_slot`): with its schedules (row-block groups,
/// fused gathers) when `schedules`, as the graph function; without, as the shape function.
LoweredGraph lower_for_backend(const Backend& backend, const FunctionGraph& fg, int first_slot, bool schedules);

/// The backend registered under `name`; UserError naming the known ones otherwise.
const Backend& find_backend(const std::string& name);
/// Every registered backend, built-in ones first.
std::vector<const Backend*> backends();
/// Their names, in the same order (without building the backends).
std::vector<std::string> backend_names();
/// The backends kiln itself has (not those a program registered).
std::vector<const Backend*> builtin_backends();
/// cmake/kilnBackends.cmake: the built-in backends' toolchains as CMake variables, which
/// kiln_add_graph(... BACKEND NAME) reads (`kiln backends --cmake` prints it).
std::string backends_cmake();
/// Adds a backend (tests add theirs); UserError when the name is taken.
void register_backend(std::shared_ptr<const Backend> backend);

}  // namespace kiln
