// kiln generated-code runtime for the opencl backend: device tensors over cl_mem buffers, the
// library's OpenCL device and program, per-context queues, workspaces and kernel objects,
// input binding, output allocation and kernel launches. It extends the C++ runtime
// (templates/cpp/prologue/runtime.hpp), whose host code computes output shapes (the shape
// function runs on the CPU: shapes are host metadata).
//
// A device tensor crossing the C ABI is a DLTensor with device {kDLOpenCL, 0} whose `data` is
// the cl_mem and whose byte_offset (a multiple of the item size) locates element [0,...,0] in
// it. The buffers must belong to the library's cl_context: NAME_opencl_queue(ctx) gives the
// queue, from which clGetCommandQueueInfo gives the context (docs/gpu_backends.md).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cctype>
#include <cstdint>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "kiln/kiln.h"

namespace kg {

/// The OpenCL C source of every kernel of this library (all graphs: one program, built once
/// per process). Defined after the graphs.
const char* device_program_source();

/// A position in a device buffer: the cl_mem and an element offset (OpenCL C has no pointers
/// across the API; kernels take both and add them). Views move the offset.
template <typename T>
struct DevPtr {
  cl_mem buf = nullptr;
  int64_t off = 0;
  DevPtr operator+(int64_t d) const { return DevPtr{buf, off + d}; }
  DevPtr operator-(int64_t d) const { return DevPtr{buf, off - d}; }
  DevPtr& operator+=(int64_t d) {
    off += d;
    return *this;
  }
};

/// A typed view of a device buffer, laid out as kg::Tensor (shape and element strides on the
/// host), so the C++ backend's view emitters (DimShuffle, Subtensor) work on it unchanged.
template <typename T, int N>
struct DTensor {
  DevPtr<T> data;
  int64_t shape[N > 0 ? N : 1] = {};
  int64_t strides[N > 0 ? N : 1] = {};

  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < N; ++i) n *= shape[i];
    return n;
  }
  void set_contiguous_strides() {
    int64_t s = 1;
    for (int i = N - 1; i >= 0; --i) {
      strides[i] = s;
      s *= shape[i] > 0 ? shape[i] : 1;
    }
  }
  bool is_contiguous() const {
    int64_t s = 1;
    for (int i = N - 1; i >= 0; --i) {
      if (shape[i] == 0) return true;
      if (shape[i] != 1 && strides[i] != s) return false;
      s *= shape[i];
    }
    return true;
  }
};

/// The library's OpenCL device: the one KILN_OPENCL_DEVICE names, else the first platform's
/// first GPU, else its first device of any kind; and the program of every kernel, built once
/// (the first context creates it).
struct Device {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_program program = nullptr;
  size_t max_group = 1;    ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  cl_uint compute_units = 1;
  bool int64_atomics = false;  ///< cl_khr_int64_base_atomics (the 64-bit atomic scatter)
  char name[256] = "";     ///< "platform name / device name"
  char error[1024] = "";   ///< why there is no device or program (empty when there is)
};

inline const char* cl_error_text(cl_int e) {
  switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform is installed)";
    default: return "an OpenCL error";
  }
}

/// One device of the machine, as KILN_OPENCL_DEVICE names it: its platform and device index
/// (the order clGetPlatformIDs and clGetDeviceIDs give, as `clinfo -l` lists them) and
/// "platform name / device name".
struct DeviceChoice {
  unsigned platform = 0, index = 0;
  cl_device_id id = nullptr;
  cl_device_type type = 0;
  char name[256] = "";
};

inline std::vector<DeviceChoice> list_devices(const std::vector<cl_platform_id>& platforms) {
  std::vector<DeviceChoice> all;
  for (unsigned p = 0; p < platforms.size(); ++p) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> ids(n);
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) continue;
    char platform_name[120] = "", device_name[120] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, nullptr);
    for (unsigned k = 0; k < n; ++k) {
      DeviceChoice c;
      c.platform = p;
      c.index = k;
      c.id = ids[k];
      clGetDeviceInfo(ids[k], CL_DEVICE_TYPE, sizeof c.type, &c.type, nullptr);
      device_name[0] = '\0';
      clGetDeviceInfo(ids[k], CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
      std::snprintf(c.name, sizeof c.name, "%s / %s", platform_name, device_name);
      all.push_back(c);
    }
  }
  return all;
}

/// Whether text `a` equals `b` (lower case), ignoring case.
inline bool equals_lower(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b)
    if (std::tolower(static_cast<unsigned char>(*a)) != *b) return false;
  return *a == *b;
}

/// Whether KILN_OPENCL_DEVICE's `want` names `c`: "P:D" (its platform and device index), a
/// device type ("gpu", "cpu", "accelerator"), or text its "platform / device" name contains,
/// ignoring case.
inline bool names_device(const char* want, const DeviceChoice& c) {
  unsigned p = 0, k = 0;
  char rest = 0;
  if (std::sscanf(want, "%u:%u%c", &p, &k, &rest) == 2) return p == c.platform && k == c.index;
  if (equals_lower(want, "gpu")) return (c.type & CL_DEVICE_TYPE_GPU) != 0;
  if (equals_lower(want, "cpu")) return (c.type & CL_DEVICE_TYPE_CPU) != 0;
  if (equals_lower(want, "accelerator")) return (c.type & CL_DEVICE_TYPE_ACCELERATOR) != 0;
  const size_t n = std::strlen(want);
  for (const char* s = c.name; *s; ++s) {
    size_t i = 0;
    while (i < n && s[i] && std::tolower(static_cast<unsigned char>(s[i])) == std::tolower(static_cast<unsigned char>(want[i]))) ++i;
    if (i == n) return true;
  }
  return false;
}

/// Picks the device (KILN_OPENCL_DEVICE, else the first GPU, else the first device) into `d`,
/// or writes why none is picked into d->error.
inline void pick_device(Device* d, const std::vector<cl_platform_id>& platforms) {
  const std::vector<DeviceChoice> all = list_devices(platforms);
  const char* want = std::getenv("KILN_OPENCL_DEVICE");
  const DeviceChoice* chosen = nullptr;
  if (want && *want) {
    for (const DeviceChoice& c : all)
      if (!chosen && names_device(want, c)) chosen = &c;
  } else {
    for (const DeviceChoice& c : all)
      if (!chosen && (c.type & CL_DEVICE_TYPE_GPU)) chosen = &c;
    if (!chosen && !all.empty()) chosen = &all.front();
  }
  if (chosen) {
    d->device = chosen->id;
    std::snprintf(d->name, sizeof d->name, "%s", chosen->name);
    return;
  }
  int at = want && *want ? std::snprintf(d->error, sizeof d->error, "KILN_OPENCL_DEVICE=\"%.100s\" names no OpenCL device (give \"platform:device\" indices, gpu, cpu, accelerator or part of a name); the devices:", want)
                         : std::snprintf(d->error, sizeof d->error, "no OpenCL device on %u platform(s)", static_cast<unsigned>(platforms.size()));
  for (const DeviceChoice& c : all) {
    if (!(want && *want) || at < 0 || static_cast<size_t>(at) >= sizeof d->error) break;
    at += std::snprintf(d->error + at, sizeof d->error - static_cast<size_t>(at), " %u:%u \"%s\"", c.platform, c.index, c.name);
  }
}

inline Device& device() {
  static Device* dev = [] {
    auto* d = new Device;  // never destroyed: buffers handed to callers may outlive everything
    cl_uint n_platforms = 0;
    cl_int e = clGetPlatformIDs(0, nullptr, &n_platforms);
    if (e != CL_SUCCESS || n_platforms == 0) {
      std::snprintf(d->error, sizeof d->error, "no OpenCL platform (%s, %d)", cl_error_text(e), e);
      return d;
    }
    std::vector<cl_platform_id> platforms(n_platforms);
    clGetPlatformIDs(n_platforms, platforms.data(), nullptr);
    pick_device(d, platforms);
    if (!d->device) return d;
    clGetDeviceInfo(d->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_group, &d->max_group, nullptr);
    clGetDeviceInfo(d->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, nullptr);
    size_t extensions_length = 0;
    if (clGetDeviceInfo(d->device, CL_DEVICE_EXTENSIONS, 0, nullptr, &extensions_length) == CL_SUCCESS) {
      std::vector<char> extensions(extensions_length + 1, '\0');
      clGetDeviceInfo(d->device, CL_DEVICE_EXTENSIONS, extensions_length, extensions.data(), nullptr);
      d->int64_atomics = std::strstr(extensions.data(), "cl_khr_int64_base_atomics") != nullptr;
    }
    d->context = clCreateContext(nullptr, 1, &d->device, nullptr, nullptr, &e);
    if (e != CL_SUCCESS) {
      std::snprintf(d->error, sizeof d->error, "clCreateContext failed (%s, %d)", cl_error_text(e), e);
      return d;
    }
    const char* source = device_program_source();
    d->program = clCreateProgramWithSource(d->context, 1, &source, nullptr, &e);
    if (e == CL_SUCCESS) e = clBuildProgram(d->program, 1, &d->device, "-cl-std=CL1.2", nullptr, nullptr);
    if (e != CL_SUCCESS) {
      size_t len = 0;
      int at = std::snprintf(d->error, sizeof d->error, "building the OpenCL program failed (%s, %d): ",
                             cl_error_text(e), e);
      if (d->program &&
          clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len) == CL_SUCCESS) {
        std::vector<char> log(len + 1, '\0');
        clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
        std::snprintf(d->error + at, sizeof d->error - static_cast<size_t>(at), "%s", log.data());
      }
      d->program = nullptr;
    }
    return d;
  }();
  return *dev;
}

/// A device workspace buffer kept across calls (grown on demand, never shrunk).
struct DevSlot {
  cl_mem buf = nullptr;
  size_t capacity = 0;
};

/// The shape function's host copy of a 0-d input or a short integer vector (a shape:
/// device_reads.hpp's read_shape_values).
struct ShapeScalar {
  const char* name = nullptr;
  alignas(8) unsigned char bytes[8 * 64] = {};
};

/// The shape function's host copy of an input whose values it reads (device_reads.hpp's
/// bind_input_host), kept per input across calls; items of 8 bytes keep any element aligned.
struct HostCopy {
  const char* name = nullptr;
  std::vector<uint64_t> items;
};

/// A context of a device graph. `host` comes first, so a kg::Ctx* of it (what the host code
/// and the C++ runtime take) converts back with dev_of.
struct DevCtx {
  Ctx host{};
  cl_command_queue queue = nullptr;
  std::vector<DevSlot> slots;
  std::deque<ShapeScalar> shape_scalars;  ///< the shape function's host copies of 0-d inputs
  std::deque<HostCopy> host_copies;       ///< the shape function's host copies of whole inputs
  std::vector<std::pair<const char*, cl_kernel>> kernels;     ///< by name (string literal identity)
  std::vector<std::pair<const void*, cl_mem>> constants;      ///< uploaded once per context
  cl_mem status = nullptr;  ///< the device status word (templates/gpu/prologue/device_status.hpp)
  StatusLog status_log;     ///< the current call's checks
  bool atomic_scatter = false;  ///< NAME_context_set_scatter_mode
};

inline DevCtx* dev_of(Ctx* c) { return reinterpret_cast<DevCtx*>(c); }

/// A new context with `num_slots` host and device workspace slots for `graph`; null when out of
/// memory. Without a device the context exists and every call fails with the reason.
inline Ctx* create_device_context(int32_t num_slots, const void* graph) {
  auto* d = new (std::nothrow) DevCtx;
  if (!d) return nullptr;
  d->host.graph = graph;
  d->host.num_threads = 1;
  d->host.num_slots = num_slots;
  d->host.slots = static_cast<Slot*>(std::calloc(static_cast<size_t>(num_slots > 0 ? num_slots : 1), sizeof(Slot)));
  if (!d->host.slots) {
    delete d;
    return nullptr;
  }
  d->slots.resize(static_cast<size_t>(num_slots > 0 ? num_slots : 1));
  Device& dev = device();
  if (dev.program) {
    cl_int e = CL_SUCCESS;
    d->queue = clCreateCommandQueue(dev.context, dev.device, 0, &e);
    if (e != CL_SUCCESS) d->queue = nullptr;
  }
  return &d->host;
}

inline void destroy_device_context(Ctx* c) {
  if (!c) return;
  DevCtx* d = dev_of(c);
  if (d->queue) clFinish(d->queue);
  for (auto& s : d->slots)
    if (s.buf) clReleaseMemObject(s.buf);
  for (auto& k : d->kernels) clReleaseKernel(k.second);
  for (auto& k : d->constants) clReleaseMemObject(k.second);
  if (d->status) clReleaseMemObject(d->status);
  if (d->queue) clReleaseCommandQueue(d->queue);
  for (int32_t i = 0; i < c->num_slots; ++i) std::free(c->slots[i].data);
  std::free(c->slots);
  delete d;
}

/// The scatter mode NAME_context_set_scatter_mode sets: 0 deterministic (x[idx] += y walks the
/// indices in order, bit for bit the C++ backend's result; the default), 1 accumulating with
/// atomics (parallel over every element of y, float sums in a run-dependent order).
inline int32_t set_scatter_mode(Ctx* c, int32_t mode) {
  if (mode != 0 && mode != 1)
    return fail(c, KILN_ERR_ARGUMENT, "scatter mode %d: 0 (deterministic) or 1 (atomic)", static_cast<int>(mode));
  dev_of(c)->atomic_scatter = mode == 1;
  return KILN_OK;
}

/// Whether a scatter runs its accumulating kernel: integer adds always (`always`: exact in any
/// order), float adds in the atomic mode; 64-bit ones only where the device has
/// cl_khr_int64_base_atomics (the deterministic kernel otherwise).
inline bool scatter_atomic(Ctx* c, bool always, bool needs_64) {
  return (always || dev_of(c)->atomic_scatter) && (!needs_64 || device().int64_atomics);
}

/// Replaces the context's queue with the caller's (which must be on the library's cl_context):
/// kernels are then ordered with the caller's own work on it.
inline int32_t set_queue(Ctx* c, cl_command_queue queue) {
  DevCtx* d = dev_of(c);
  cl_context qc = nullptr;
  if (!queue || clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qc, &qc, nullptr) != CL_SUCCESS)
    return fail(c, KILN_ERR_ARGUMENT, "not an OpenCL command queue");
  if (qc != device().context)
    return fail(c, KILN_ERR_DEVICE, "the queue belongs to another cl_context than the library's (NAME_opencl_queue)");
  clRetainCommandQueue(queue);
  if (d->queue) {
    clFinish(d->queue);
    clReleaseCommandQueue(d->queue);
  }
  d->queue = queue;
  return KILN_OK;
}

/// Fails unless the device, the program and the context's queue exist (start of every call).
inline int32_t check_device(Ctx* c) {
  Device& dev = device();
  if (!dev.program) return fail(c, KILN_ERR_DEVICE, "OpenCL is unavailable: %s", dev.error);
  if (!dev_of(c)->queue) return fail(c, KILN_ERR_DEVICE, "the context has no OpenCL command queue");
  return KILN_OK;
}

inline int32_t cl_fail(Ctx* c, cl_int e, const char* what) {
  return fail(c, e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ? KILN_ERR_ALLOC : KILN_ERR_DEVICE,
              "%s failed (%s, %d)", what, cl_error_text(e), e);
}

/// Element `i` (counted from t.data) read to the host: a blocking read on the context's queue
/// (so after the kernels before it).
template <typename T, int N>
inline int32_t read_element(Ctx* ctx, const DTensor<T, N>& t, int64_t i, T& out) {
  const cl_int e = clEnqueueReadBuffer(dev_of(ctx)->queue, t.data.buf, CL_TRUE, static_cast<size_t>(t.data.off + i) * sizeof(T),
                                       sizeof(T), &out, 0, nullptr, nullptr);
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, "reading a device scalar");
}

/// Binds a caller's kDLOpenCL tensor: device, dtype, rank, static lengths, NumPy's size limit,
/// the element offset, and that every element it addresses lies inside the cl_mem.
template <typename T, int N>
inline int32_t bind_input(Ctx* ctx, const DLTensor& t, DTensor<T, N>& out, DLDataType want,
                          const int64_t* static_shape, const char* name) {
  if (device_type_of(t.device) != kDLOpenCL)
    return fail(ctx, KILN_ERR_DEVICE, "input \"%s\" is not an OpenCL buffer (device kDLOpenCL, data a cl_mem)", name);
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1)
    return fail(ctx, KILN_ERR_INPUT_DTYPE, "input \"%s\" must be %s, got %s", name, dtype_text(want), dtype_text(t.dtype));
  if (t.ndim != N)
    return fail(ctx, KILN_ERR_INPUT_RANK, "input \"%s\" must have %d dimension(s), got %d", name, N, static_cast<int>(t.ndim));
  if (N > 0 && t.shape == nullptr) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" has no shape", name);
  for (int i = 0; i < N; ++i) {
    if (t.shape[i] < 0) return fail(ctx, KILN_ERR_INPUT_SHAPE, "input \"%s\" has a negative length", name);
    if (static_shape[i] >= 0 && t.shape[i] != static_shape[i])
      return fail(ctx, KILN_ERR_INPUT_SHAPE, "input \"%s\" must have length %lld in dimension %d, got %lld", name,
                  static_cast<long long>(static_shape[i]), i, static_cast<long long>(t.shape[i]));
    out.shape[i] = t.shape[i];
  }
  if (checked_size(out.shape, N, sizeof(T)) < 0)
    return fail_too_big(ctx, KILN_ERR_INPUT_SHAPE, name, nullptr, out.shape, N, sizeof(T));
  out.set_contiguous_strides();
  if (t.strides)
    for (int i = 0; i < N; ++i)
      if (t.shape[i] != 1) out.strides[i] = t.strides[i];
  if (t.byte_offset % sizeof(T) != 0)
    return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\": byte_offset is not a multiple of %zu", name, sizeof(T));
  out.data.buf = static_cast<cl_mem>(t.data);
  out.data.off = static_cast<int64_t>(t.byte_offset / sizeof(T));
  if (out.size() == 0) return KILN_OK;
  if (!t.data) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" has no data", name);
  size_t bytes = 0;
  if (clGetMemObjectInfo(out.data.buf, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr) != CL_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "input \"%s\": data is not a cl_mem", name);
  // The lowest and highest element it addresses, within [0, bytes / sizeof(T)).
  __int128 lo = out.data.off, hi = out.data.off;
  for (int i = 0; i < N; ++i) {
    const __int128 span = static_cast<__int128>(out.strides[i]) * (out.shape[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0 || hi >= static_cast<__int128>(bytes / sizeof(T)))
    return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\": its shape, strides and byte_offset address outside its cl_mem of %zu bytes",
                name, bytes);
  return KILN_OK;
}

/// The shape function's binding of an input: its shape only (shapes are host metadata), after
/// the same checks of device, dtype and rank; a 0-d input's value is also read to the host.
template <typename T, int N>
inline int32_t bind_input_shape(Ctx* ctx, const DLTensor& t, Tensor<T, N>& out, DLDataType want,
                                const int64_t* static_shape, const char* name) {
  DTensor<T, N> d;
  KILN_TRY(bind_input(ctx, t, d, want, static_shape, name));
  for (int i = 0; i < N; ++i) {
    out.shape[i] = d.shape[i];
    out.strides[i] = d.strides[i];
  }
  out.data = nullptr;
  // A 0-d input may be a length or a bound the shape function reads (Alloc, ARange, Eye), a
  // short integer vector a shape (Reshape): their values are read to the host.
  if constexpr (N <= 1) KILN_TRY(read_shape_values(ctx, d, name, out));
  return KILN_OK;
}

inline int32_t new_buffer(Ctx* ctx, size_t bytes, cl_mem& buf) {
  cl_int e = CL_SUCCESS;
  buf = clCreateBuffer(device().context, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &e);
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, "clCreateBuffer");
}

/// A workspace slot's buffer for `t` (contiguous), grown by at least half when too small.
/// Buffers are only released after the queue has finished with them.
template <typename T, int N>
inline int32_t alloc_workspace(Ctx* ctx, int slot, DTensor<T, N>& t) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an intermediate array", t.shape, N, sizeof(T));
  const size_t bytes = static_cast<size_t>(size) * sizeof(T);
  DevSlot& s = dev_of(ctx)->slots[static_cast<size_t>(slot)];
  if (s.capacity < bytes || !s.buf) {
    size_t want = bytes;
    if (s.capacity > 0 && want < s.capacity + s.capacity / 2) want = s.capacity + s.capacity / 2;
    if (s.buf) {
      clFinish(dev_of(ctx)->queue);
      clReleaseMemObject(s.buf);
      s.buf = nullptr;
      s.capacity = 0;
    }
    KILN_TRY(new_buffer(ctx, want, s.buf));
    s.capacity = want;
  }
  t.data = DevPtr<T>{s.buf, 0};
  t.set_contiguous_strides();
  return KILN_OK;
}

/// A device output handed to the caller: the DLManagedTensor owns one reference to the cl_mem.
struct DevOutput {
  DLManagedTensor managed;
  int64_t shape[16];
};

inline void free_dev_output(DLManagedTensor* m) {
  auto* o = reinterpret_cast<DevOutput*>(m);
  if (o->managed.dl_tensor.data) clReleaseMemObject(static_cast<cl_mem>(o->managed.dl_tensor.data));
  delete o;
}

/// A graph output's memory: a new cl_mem handed over ("call"), or the caller's contiguous
/// kDLOpenCL tensor after checking it ("call_into").
template <typename T, int N>
inline int32_t alloc_output(Ctx* ctx, OutputSink& sink, int k, DTensor<T, N>& t, DLDataType dt) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an output array", t.shape, N, sizeof(T));
  t.set_contiguous_strides();
  if (sink.caller_provided) {
    DLTensor& d = sink.given[k];
    if (device_type_of(d.device) != kDLOpenCL) return fail(ctx, KILN_ERR_DEVICE, "output %d is not an OpenCL buffer", k);
    if (d.dtype.code != dt.code || d.dtype.bits != dt.bits || d.dtype.lanes != 1)
      return fail(ctx, KILN_ERR_OUTPUT, "output %d must be %s, got %s", k, dtype_text(dt), dtype_text(d.dtype));
    if (d.ndim != N) return fail(ctx, KILN_ERR_OUTPUT, "output %d must have %d dimension(s), got %d", k, N, static_cast<int>(d.ndim));
    if (N > 0 && d.shape == nullptr) return fail(ctx, KILN_ERR_OUTPUT, "output %d has no shape", k);
    for (int i = 0; i < N; ++i) {
      if (d.shape[i] != t.shape[i])
        return fail(ctx, KILN_ERR_OUTPUT, "output %d must have length %lld in dimension %d, got %lld", k,
                    static_cast<long long>(t.shape[i]), i, static_cast<long long>(d.shape[i]));
      if (size > 0 && d.strides && t.shape[i] != 1 && d.strides[i] != t.strides[i])
        return fail(ctx, KILN_ERR_OUTPUT, "output %d must be C-contiguous", k);
    }
    if (d.byte_offset % sizeof(T) != 0)
      return fail(ctx, KILN_ERR_OUTPUT, "output %d: byte_offset is not a multiple of %zu", k, sizeof(T));
    t.data = DevPtr<T>{static_cast<cl_mem>(d.data), static_cast<int64_t>(d.byte_offset / sizeof(T))};
    if (size == 0) return KILN_OK;
    size_t bytes = 0;
    if (!d.data || clGetMemObjectInfo(t.data.buf, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr) != CL_SUCCESS)
      return fail(ctx, KILN_ERR_OUTPUT, "output %d: data is not a cl_mem", k);
    if (d.byte_offset + static_cast<uint64_t>(size) * sizeof(T) > bytes)
      return fail(ctx, KILN_ERR_OUTPUT, "output %d does not fit in its cl_mem of %zu bytes", k, bytes);
    return KILN_OK;
  }
  static_assert(N <= 16, "rank above 16");
  auto* o = new (std::nothrow) DevOutput{};
  if (!o) return fail(ctx, KILN_ERR_ALLOC, "out of memory");
  cl_mem buf = nullptr;
  const int32_t status = new_buffer(ctx, static_cast<size_t>(size) * sizeof(T), buf);
  if (status != KILN_OK) {
    delete o;
    return status;
  }
  for (int i = 0; i < N; ++i) o->shape[i] = t.shape[i];
  DLTensor& d = o->managed.dl_tensor;
  d.data = buf;
  d.device = DLDevice{kDLOpenCL, 0};
  d.ndim = N;
  d.dtype = dt;
  d.shape = o->shape;
  d.strides = nullptr;
  d.byte_offset = 0;
  o->managed.deleter = free_dev_output;
  if (sink.owned[k]) sink.owned[k]->deleter(sink.owned[k]);
  sink.owned[k] = &o->managed;
  t.data = DevPtr<T>{buf, 0};
  return KILN_OK;
}

/// A constant of the graph on the device: uploaded on the context's first call, then reused.
template <typename T, int N>
inline int32_t bind_constant(Ctx* ctx, DTensor<T, N>& t, const T* host) {
  DevCtx* d = dev_of(ctx);
  t.set_contiguous_strides();
  for (auto& c : d->constants)
    if (c.first == host) {
      t.data = DevPtr<T>{c.second, 0};
      return KILN_OK;
    }
  const size_t bytes = static_cast<size_t>(t.size()) * sizeof(T);
  cl_mem buf = nullptr;
  KILN_TRY(new_buffer(ctx, bytes, buf));
  if (bytes) {
    const cl_int e = clEnqueueWriteBuffer(d->queue, buf, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr);
    if (e != CL_SUCCESS) {
      clReleaseMemObject(buf);
      return cl_fail(ctx, e, "uploading a constant");
    }
  }
  d->constants.emplace_back(host, buf);
  t.data = DevPtr<T>{buf, 0};
  return KILN_OK;
}

/// The context's kernel object for `name` (created on first use: kernel arguments are state,
/// so each context has its own).
inline int32_t kernel(Ctx* ctx, const char* name, cl_kernel& k) {
  DevCtx* d = dev_of(ctx);
  for (auto& e : d->kernels)
    if (e.first == name) {
      k = e.second;
      return KILN_OK;
    }
  cl_int e = CL_SUCCESS;
  k = clCreateKernel(device().program, name, &e);
  if (e != CL_SUCCESS) return cl_fail(ctx, e, name);
  d->kernels.emplace_back(name, k);
  return KILN_OK;
}

// Kernel arguments: a buffer position is two (the cl_mem and the element offset, see
// templates/gpu/dialects.txt), a length or stride is a 64-bit integer.
template <typename T>
inline cl_int set_arg(cl_kernel k, cl_uint& i, const DevPtr<T>& p) {
  cl_int e = clSetKernelArg(k, i++, sizeof(cl_mem), &p.buf);
  const cl_long off = p.off;
  if (e == CL_SUCCESS) e = clSetKernelArg(k, i++, sizeof off, &off);
  return e;
}
inline cl_int set_arg(cl_kernel k, cl_uint& i, int64_t v) {
  const cl_long x = v;
  return clSetKernelArg(k, i++, sizeof x, &x);
}
inline cl_int set_arg(cl_kernel k, cl_uint& i, double v) {
  const cl_double x = v;
  return clSetKernelArg(k, i++, sizeof x, &x);
}

/// Launches kernel `name` with `groups` work-groups of `group` work-items (a 1-D range).
template <typename... A>
inline int32_t launch(Ctx* ctx, const char* name, int64_t groups, int64_t group, const A&... args) {
  if (groups <= 0) return KILN_OK;
  cl_kernel k = nullptr;
  KILN_TRY(kernel(ctx, name, k));
  cl_uint i = 0;
  cl_int e = CL_SUCCESS;
  ((e = e == CL_SUCCESS ? set_arg(k, i, args) : e), ...);
  if (e != CL_SUCCESS) return cl_fail(ctx, e, "clSetKernelArg");
  const size_t global = static_cast<size_t>(groups * group), local = static_cast<size_t>(group);
  e = clEnqueueNDRangeKernel(dev_of(ctx)->queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, name);
}

/// Work-items per group of kiln's kernels (the reduction kernels' local arrays have this many
/// elements: templates/gpu/dialects.txt's group_size).
constexpr int64_t kGroup = 256;

/// Groups for a grid-stride loop over n elements: enough to fill the device a few times over,
/// never more than the elements need.
inline int64_t groups_for(int64_t n) {
  const int64_t needed = (n + kGroup - 1) / kGroup;
  const int64_t fill = static_cast<int64_t>(device().compute_units) * 8;
  return needed < fill ? needed : fill;
}

/// Groups for a loop over n independent items each a group handles (grid-stride in the kernel).
inline int64_t groups_cap(int64_t n) {
  const int64_t most = static_cast<int64_t>(device().compute_units) * 64;
  return n < most ? n : most;
}

/// Whether `p` may be read or written four elements at a time (vload4/vstore4 of the
/// contiguous Elemwise path): its element offset is a multiple of 4 (a cl_mem's own address is
/// aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128 bytes). A DLPack byte_offset may be
/// any multiple of the item size, so views and sliced inputs take the scalar loop.
template <typename T>
inline bool vec4_aligned(const DevPtr<T>& p) {
  return p.off % 4 == 0;
}

/// Runs per output of a reduction: enough groups in all to fill the device a few times over,
/// each with at least four elements per work-item.
inline int64_t reduce_chunks(int64_t n_out, int64_t n_red) {
  if (n_out <= 0) return 1;
  const int64_t want = static_cast<int64_t>(device().compute_units) * 8 / n_out;
  const int64_t most = (n_red + 4 * kGroup - 1) / (4 * kGroup);
  const int64_t c = want < most ? want : most;
  return c > 1 ? c : 1;
}

/// Chunks per output of a reduction with one work-item per output and chunk: enough
/// work-items in all to fill the device a few times over, each folding at least 32 elements.
inline int64_t lane_chunks(int64_t n_out, int64_t n_red) {
  if (n_out <= 0) return 1;
  const int64_t want = static_cast<int64_t>(device().compute_units) * 8 * kGroup / n_out;
  const int64_t most = n_red / 32;
  const int64_t c = want < most ? want : most;
  return c > 1 ? c : 1;
}

/// Records `check` for a checking kernel about to be launched and gives the kernel's arguments:
/// the status word and the number it writes there. The call's first check queues the word's
/// reset (ordered before the kernel; nothing waits).
inline int32_t arm_status(Ctx* ctx, const StatusCheck& check, DevPtr<int32_t>& word, int64_t& number) {
  DevCtx* d = dev_of(ctx);
  if (!d->status) KILN_TRY(new_buffer(ctx, 4 * sizeof(int32_t), d->status));
  if (!d->status_log.armed) {
    const cl_int zero = 0;
    const cl_int e = clEnqueueFillBuffer(d->queue, d->status, &zero, sizeof zero, 0, 4 * sizeof(int32_t), 0, nullptr, nullptr);
    if (e != CL_SUCCESS) return cl_fail(ctx, e, "resetting the status word");
    d->status_log.armed = true;
  }
  d->status_log.checks.push_back(check);
  word = DevPtr<int32_t>{d->status, 0};
  number = static_cast<int64_t>(d->status_log.checks.size());
  return KILN_OK;
}

/// Ends a call that returns `status`: when it launched checking kernels, reads the status word
/// (one blocking read) and returns the first error they found instead (it happened at an
/// earlier node than any error the host found after it).
inline int32_t end_status(Ctx* ctx, int32_t status) {
  DevCtx* d = dev_of(ctx);
  if (!d->status_log.armed) return status;
  d->status_log.armed = false;
  int32_t word[4] = {};
  const cl_int e = clEnqueueReadBuffer(d->queue, d->status, CL_TRUE, 0, sizeof word, word, 0, nullptr, nullptr);
  if (e != CL_SUCCESS) return status != KILN_OK ? status : cl_fail(ctx, e, "reading the status word");
  return word[0] != 0 ? status_failure(ctx, d->status_log, word) : status;
}

/// Sets every element of a contiguous device tensor (a new output or workspace) to zero bits,
/// ordered on the queue (AllocEmpty's fill; nothing waits).
template <typename T, int N>
inline int32_t zero_fill(Ctx* ctx, DTensor<T, N>& t) {
  const int64_t n = t.size();
  if (n == 0) return KILN_OK;
  const cl_uchar zero = 0;
  const cl_int e = clEnqueueFillBuffer(dev_of(ctx)->queue, t.data.buf, &zero, 1, static_cast<size_t>(t.data.off) * sizeof(T),
                                       static_cast<size_t>(n) * sizeof(T), 0, nullptr, nullptr);
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, "clEnqueueFillBuffer");
}

/// Copies src into dst (same shape; any strides) with the strided copy kernel of its item size.
template <typename T, int N>
inline int32_t copy_tensor(Ctx* ctx, const DTensor<T, N>& src, DTensor<T, N>& dst) {
  static_assert(N <= 6, "device copies handle rank 6 at most");
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "item size");
  static const char* const names[] = {"kiln_copy_1", "kiln_copy_2", "kiln_copy_4", "kiln_copy_8"};
  const char* name = names[sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3];
  int64_t len[6] = {1, 1, 1, 1, 1, 1}, ss[6] = {}, ds[6] = {};
  for (int i = 0; i < N; ++i) {
    len[6 - N + i] = src.shape[i];
    ss[6 - N + i] = src.strides[i];
    ds[6 - N + i] = dst.strides[i];
  }
  const int64_t n = src.size();
  using U = typename std::conditional<sizeof(T) == 1, uint8_t, typename std::conditional<sizeof(T) == 2, uint16_t,
            typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type;
  const DevPtr<U> s{src.data.buf, src.data.off}, d{dst.data.buf, dst.data.off};
  return launch(ctx, name, groups_for(n), kGroup, s, d, n, len[0], len[1], len[2], len[3], len[4], len[5], ss[0], ss[1],
                ss[2], ss[3], ss[4], ss[5], ds[0], ds[1], ds[2], ds[3], ds[4], ds[5]);
}

/// Writes n int64 values the host computed (Shape's lengths) to dst, eight per launch of the
/// put kernel: the values travel as kernel arguments, so no host buffer must outlive the call.
inline int32_t put_int64(Ctx* ctx, DevPtr<int64_t> dst, const int64_t* v, int64_t n) {
  for (int64_t at = 0; at < n; at += 8) {
    int64_t a[8] = {};
    const int64_t k = n - at < 8 ? n - at : 8;
    for (int64_t i = 0; i < k; ++i) a[i] = v[at + i];
    KILN_TRY(launch(ctx, "kiln_put_int64", 1, 8, dst + at, k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]));
  }
  return KILN_OK;
}

/// n elements from p on by `stride` (any sign, 0 included) read to host memory `out` in one
/// blocking read on the context's queue (a rectangle of one-element rows): the data-dependent
/// lengths of Repeat read its counts this way.
template <typename T>
inline int32_t read_elements(Ctx* ctx, DevPtr<T> p, int64_t n, int64_t stride, T* out) {
  if (n <= 0) return KILN_OK;
  cl_command_queue q = dev_of(ctx)->queue;
  cl_int e;
  if (stride == 1 || n == 1) {
    e = clEnqueueReadBuffer(q, p.buf, CL_TRUE, static_cast<size_t>(p.off) * sizeof(T), static_cast<size_t>(n) * sizeof(T), out, 0,
                            nullptr, nullptr);
  } else if (stride == 0) {
    e = clEnqueueReadBuffer(q, p.buf, CL_TRUE, static_cast<size_t>(p.off) * sizeof(T), sizeof(T), out, 0, nullptr, nullptr);
    for (int64_t i = 1; i < n; ++i) out[i] = out[0];
  } else {
    // A negative stride reads the same elements from the last one up, reversed afterwards.
    const int64_t first = stride > 0 ? p.off : p.off + (n - 1) * stride, step = stride > 0 ? stride : -stride;
    const size_t origin[3] = {static_cast<size_t>(first) * sizeof(T), 0, 0}, host[3] = {0, 0, 0};
    const size_t region[3] = {sizeof(T), static_cast<size_t>(n), 1};
    e = clEnqueueReadBufferRect(q, p.buf, CL_TRUE, origin, host, region, static_cast<size_t>(step) * sizeof(T), 0, sizeof(T), 0,
                                out, 0, nullptr, nullptr);
    if (stride < 0)
      for (int64_t i = 0, j = n - 1; i < j; ++i, --j) std::swap(out[i], out[j]);
  }
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, "reading device elements");
}

/// Uploads n host values to the contiguous device tensor t (a blocking write: the host memory
/// may change after the call; used where the host computed a small table, Repeat's offsets).
template <typename T, int N>
inline int32_t write_elements(Ctx* ctx, DTensor<T, N>& t, const T* host, int64_t n) {
  if (n <= 0) return KILN_OK;
  const cl_int e = clEnqueueWriteBuffer(dev_of(ctx)->queue, t.data.buf, CL_TRUE, static_cast<size_t>(t.data.off) * sizeof(T),
                                        static_cast<size_t>(n) * sizeof(T), host, 0, nullptr, nullptr);
  return e == CL_SUCCESS ? KILN_OK : cl_fail(ctx, e, "uploading to the device");
}

/// The element of type U `bytes` after p (parts of one workspace buffer holding arrays of
/// several types; `bytes` keeps U's alignment).
template <typename U, typename T>
inline DevPtr<U> retype(DevPtr<T> p, int64_t bytes) {
  return DevPtr<U>{p.buf, (p.off * static_cast<int64_t>(sizeof(T)) + bytes) / static_cast<int64_t>(sizeof(U))};
}

/// A DLTensor's data, byte_offset and device for a device position (Scan passes rows of its
/// buffers to its step function as DLTensors), and the position a DLTensor describes.
template <typename T>
inline void set_dl_data(DLTensor& d, DevPtr<T> p) {
  d.data = p.buf;
  d.byte_offset = static_cast<uint64_t>(p.off) * sizeof(T);
  d.device = DLDevice{kDLOpenCL, 0};
}
template <typename T>
inline DevPtr<T> dl_data(const DLTensor& d) {
  return DevPtr<T>{static_cast<cl_mem>(d.data), static_cast<int64_t>(d.byte_offset / sizeof(T))};
}

}  // namespace kg
