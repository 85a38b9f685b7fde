// A GPU dialect: how kiln's shared kernel templates (templates/gpu/) spell qualifiers, thread
// and group indices, barriers, local memory, buffer parameters and warp shuffles in one GPU
// language. The table is data (templates/gpu/dialects.txt); the opencl and cuda backends
// differ only in which row they render with and in their host runtime.
#pragma once

#include <map>
#include <string>

#include "codegen/c_types.h"
#include "codegen/render.h"

namespace kiln {

class GpuDialect {
 public:
  /// The dialect named `name` ("opencl", "cuda") from templates/gpu/dialects.txt.
  static const GpuDialect& get(const std::string& name);

  const std::string& name() const { return name_; }
  /// A row of the table as written ("" for `-`); InternalError for a key it lacks.
  const std::string& operator[](const std::string& key) const;
  /// A kernel's buffer parameter and the statement binding it (pointer `name` to elements of
  /// `type`, read-only when `read_only`).
  std::string buffer_param(const std::string& type, const std::string& name, bool read_only) const;
  std::string buffer_bind(const std::string& type, const std::string& name, bool read_only) const;
  /// The type of a pointer into a global buffer of `type` (a device function's parameter).
  std::string global_ptr(const std::string& type, bool read_only) const;
  /// `{name}[{size}]` of `type` in group-local memory.
  std::string local_array(const std::string& type, const std::string& name, int size) const;
  /// Four consecutive elements of storage type `type` as one vector (float4 in OpenCL, the
  /// prelude's aligned kiln_vec4<T> in CUDA): its type, a load from and a store to pointer
  /// expression `p` (aligned to the vector: the host checks, kg::vec4_aligned), and lane `l`
  /// of vector variable `v` (readable and assignable).
  std::string vec4_type(const std::string& type) const;
  std::string vec4_load(const std::string& type, const std::string& p) const;
  std::string vec4_store(const std::string& type, const std::string& p, const std::string& v) const;
  std::string vec4_lane(const std::string& v, int l) const;
  /// How the host names kernel `name` in a launch (the kernel_ref row).
  std::string kernel_ref(const std::string& name) const;
  /// Whether reductions end with warp shuffles (CUDA) rather than local memory (OpenCL).
  bool has_shuffle() const { return !(*this)["shuffle_down"].empty(); }
  /// The index and qualifier rows as template data (kernel, global_id, local_id, barrier, ...).
  TemplateData data() const;
  /// The kernel-file prelude: the dialect's own, then the shared scalar helpers.
  std::string prelude() const;

 private:
  std::string name_;
  std::map<std::string, std::string> rows_;
};

/// The storage type of `dt`'s elements in device buffers (bool is a byte in both dialects).
std::string gpu_storage_type(DType dt);

}  // namespace kiln
