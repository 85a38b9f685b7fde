// kiln generated-code runtime for the cuda backend: device tensors over device pointers, the
// context's stream, stream-ordered workspaces (cudaMallocAsync, kept across calls), input
// binding, output allocation and kernel launches. It extends the C++ runtime
// (templates/cpp/prologue/runtime.hpp), whose host code computes output shapes (the shape
// function runs on the CPU: shapes are host metadata). The same interface as the opencl
// backend's (templates/opencl/prologue/device_runtime.hpp), so both render the same host code.
//
// A device tensor crossing the C ABI is a DLTensor with device {kDLCUDA, id}, `data` a device
// pointer and byte_offset locating element [0,...,0] from it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <utility>
#include <type_traits>
#include <vector>

#include <dlpack/dlpack.h>

#include "kiln/kiln.h"

namespace kg {

template <typename T>
using DevPtr = T*;

/// A typed view of device memory, laid out as kg::Tensor (shape and element strides on the
/// host), so the C++ backend's view emitters work on it unchanged.
template <typename T, int N>
struct DTensor {
  T* data = nullptr;
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

/// The current device's properties the launches size grids from.
struct Device {
  int id = -1;
  int sms = 1;        ///< multiprocessors
  char error[256] = "";
};

inline Device& device() {
  static Device* dev = [] {
    auto* d = new Device;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      std::snprintf(d->error, sizeof d->error, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
      return d;
    }
    cudaGetDevice(&d->id);
    cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, d->id);
    return d;
  }();
  return *dev;
}

struct DevSlot {
  void* data = nullptr;
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

/// A context of a device graph; `host` comes first (kg::Ctx* converts back with dev_of).
struct DevCtx {
  Ctx host{};
  cudaStream_t stream = nullptr;  ///< the caller's (NAME_context_set_stream) or the default
  std::vector<DevSlot> slots;
  std::deque<ShapeScalar> shape_scalars;  ///< the shape function's host copies of 0-d inputs
  std::deque<HostCopy> host_copies;       ///< the shape function's host copies of whole inputs
  std::vector<std::pair<const void*, void*>> constants;  ///< uploaded once per context
  int32_t* status = nullptr;  ///< the device status word (templates/gpu/prologue/device_status.hpp)
  StatusLog status_log;       ///< the current call's checks
  /// The context's BLAS handle (cuBLAS: templates/cuda/prologue/device_blas.hpp, embedded only
  /// with products), created on first use and released with the context.
  void* blas = nullptr;
  void (*release_blas)(void*) = nullptr;
  /// The context's cuSOLVER handle (templates/cuda/prologue/device_linalg.hpp, embedded only
  /// with device linear algebra), created on first use and released with the context.
  void* solver = nullptr;
  void (*release_solver)(void*) = nullptr;
  bool atomic_scatter = false;  ///< NAME_context_set_scatter_mode
};

inline DevCtx* dev_of(Ctx* c) { return reinterpret_cast<DevCtx*>(c); }

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
  return &d->host;
}

inline void destroy_device_context(Ctx* c) {
  if (!c) return;
  DevCtx* d = dev_of(c);
  for (auto& s : d->slots)
    if (s.data) cudaFreeAsync(s.data, d->stream);
  for (auto& k : d->constants) cudaFreeAsync(k.second, d->stream);
  if (d->status) cudaFreeAsync(d->status, d->stream);
  if (d->blas) d->release_blas(d->blas);
  if (d->solver) d->release_solver(d->solver);
  for (int32_t i = 0; i < c->num_slots; ++i) std::free(c->slots[i].data);
  std::free(c->slots);
  delete d;
}

/// The stream the context's kernels run on (the stream setter of the C ABI).
inline int32_t set_stream(Ctx* c, cudaStream_t stream) {
  dev_of(c)->stream = stream;
  return KILN_OK;
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
/// order), float adds in the atomic mode (atomicAdd has every width kiln uses from sm_60 on).
inline bool scatter_atomic(Ctx* c, bool always, bool /*needs_64*/) { return always || dev_of(c)->atomic_scatter; }

inline int32_t check_device(Ctx* c) {
  if (device().id < 0) return fail(c, KILN_ERR_DEVICE, "CUDA is unavailable: %s", device().error);
  return KILN_OK;
}

inline int32_t cuda_fail(Ctx* c, cudaError_t e, const char* what) {
  return fail(c, e == cudaErrorMemoryAllocation ? KILN_ERR_ALLOC : KILN_ERR_DEVICE, "%s failed (%s)", what,
              cudaGetErrorString(e));
}

/// Element `i` (counted from t.data) read to the host: a copy on the context's stream that
/// waits for it (and so for the kernels before it).
template <typename T, int N>
inline int32_t read_element(Ctx* ctx, const DTensor<T, N>& t, int64_t i, T& out) {
  cudaStream_t stream = dev_of(ctx)->stream;
  cudaError_t e = cudaMemcpyAsync(&out, t.data + i, sizeof(T), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? KILN_OK : cuda_fail(ctx, e, "reading a device scalar");
}

/// Binds a caller's kDLCUDA tensor: device, dtype, rank, static lengths, NumPy's size limit,
/// alignment. (The extent of a device allocation is not queryable: it is not checked.)
template <typename T, int N>
inline int32_t bind_input(Ctx* ctx, const DLTensor& t, DTensor<T, N>& out, DLDataType want,
                          const int64_t* static_shape, const char* name) {
  if (device_type_of(t.device) != kDLCUDA && device_type_of(t.device) != kDLCUDAManaged)
    return fail(ctx, KILN_ERR_DEVICE, "input \"%s\" is not in CUDA device memory (kDLCUDA)", name);
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
  const uintptr_t first = reinterpret_cast<uintptr_t>(t.data) + static_cast<uintptr_t>(t.byte_offset);
  if (first % alignof(T) != 0) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" is not aligned to %zu bytes", name, alignof(T));
  out.data = reinterpret_cast<T*>(first);
  if (out.size() > 0 && !t.data) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" has no data", name);
  return KILN_OK;
}

/// The shape function's binding of an input: its shape only (see the opencl runtime).
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

/// A workspace slot's memory for `t`: stream-ordered (cudaMallocAsync on the context's stream),
/// kept across calls, grown by at least half when too small.
template <typename T, int N>
inline int32_t alloc_workspace(Ctx* ctx, int slot, DTensor<T, N>& t) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an intermediate array", t.shape, N, sizeof(T));
  const size_t bytes = static_cast<size_t>(size) * sizeof(T);
  DevCtx* d = dev_of(ctx);
  DevSlot& s = d->slots[static_cast<size_t>(slot)];
  if (s.capacity < bytes || !s.data) {
    size_t want = bytes;
    if (s.capacity > 0 && want < s.capacity + s.capacity / 2) want = s.capacity + s.capacity / 2;
    if (s.data) cudaFreeAsync(s.data, d->stream);
    s.data = nullptr;
    s.capacity = 0;
    const cudaError_t e = cudaMallocAsync(&s.data, want ? want : 1, d->stream);
    if (e != cudaSuccess) return cuda_fail(ctx, e, "cudaMallocAsync");
    s.capacity = want;
  }
  t.data = static_cast<T*>(s.data);
  t.set_contiguous_strides();
  return KILN_OK;
}

struct DevOutput {
  DLManagedTensor managed;
  int64_t shape[16];
};

inline void free_dev_output(DLManagedTensor* m) {
  auto* o = reinterpret_cast<DevOutput*>(m);
  if (o->managed.dl_tensor.data) cudaFree(o->managed.dl_tensor.data);
  delete o;
}

template <typename T, int N>
inline int32_t alloc_output(Ctx* ctx, OutputSink& sink, int k, DTensor<T, N>& t, DLDataType dt) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an output array", t.shape, N, sizeof(T));
  t.set_contiguous_strides();
  if (sink.caller_provided) {
    DLTensor& d = sink.given[k];
    if (device_type_of(d.device) != kDLCUDA && device_type_of(d.device) != kDLCUDAManaged)
      return fail(ctx, KILN_ERR_DEVICE, "output %d is not in CUDA device memory", k);
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
    t.data = reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
    if (size > 0 && !d.data) return fail(ctx, KILN_ERR_OUTPUT, "output %d has no data", k);
    return KILN_OK;
  }
  static_assert(N <= 16, "rank above 16");
  auto* o = new (std::nothrow) DevOutput{};
  if (!o) return fail(ctx, KILN_ERR_ALLOC, "out of memory");
  void* p = nullptr;
  const cudaError_t e = cudaMallocAsync(&p, size > 0 ? static_cast<size_t>(size) * sizeof(T) : 1, dev_of(ctx)->stream);
  if (e != cudaSuccess) {
    delete o;
    return cuda_fail(ctx, e, "cudaMallocAsync");
  }
  for (int i = 0; i < N; ++i) o->shape[i] = t.shape[i];
  DLTensor& d = o->managed.dl_tensor;
  d.data = p;
  d.device = DLDevice{kDLCUDA, device().id};
  d.ndim = N;
  d.dtype = dt;
  d.shape = o->shape;
  d.strides = nullptr;
  d.byte_offset = 0;
  o->managed.deleter = free_dev_output;
  if (sink.owned[k]) sink.owned[k]->deleter(sink.owned[k]);
  sink.owned[k] = &o->managed;
  t.data = static_cast<T*>(p);
  return KILN_OK;
}

template <typename T, int N>
inline int32_t bind_constant(Ctx* ctx, DTensor<T, N>& t, const T* host) {
  DevCtx* d = dev_of(ctx);
  t.set_contiguous_strides();
  for (auto& c : d->constants)
    if (c.first == host) {
      t.data = static_cast<T*>(c.second);
      return KILN_OK;
    }
  const size_t bytes = static_cast<size_t>(t.size()) * sizeof(T);
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
  if (e == cudaSuccess && bytes) e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "uploading a constant");
  d->constants.emplace_back(host, p);
  t.data = static_cast<T*>(p);
  return KILN_OK;
}

/// A launch argument as the kernel's parameter type: device pointers of bool tensors are the
/// kernels' byte pointers (bool is stored as uint8_t, templates/gpu/dialects.txt).
template <typename P, typename A>
inline P device_arg(const A& a) {
  if constexpr (std::is_pointer<P>::value && std::is_pointer<A>::value)
    return reinterpret_cast<P>(a);
  else
    return static_cast<P>(a);
}

/// Launches `kernel` with `groups` blocks of `group` threads on the context's stream.
template <typename... P, typename... A>
inline int32_t launch(Ctx* ctx, void (*kernel)(P...), int64_t groups, int64_t group, const A&... args) {
  if (groups <= 0) return KILN_OK;
  kernel<<<static_cast<unsigned>(groups), static_cast<unsigned>(group), 0, dev_of(ctx)->stream>>>(device_arg<P>(args)...);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? KILN_OK : cuda_fail(ctx, e, "a kernel launch");
}

/// Threads per block of kiln's kernels (the reductions' shared arrays have this many elements).
constexpr int64_t kGroup = 256;

inline int64_t groups_for(int64_t n) {
  const int64_t needed = (n + kGroup - 1) / kGroup;
  const int64_t fill = static_cast<int64_t>(device().sms) * 8;
  return needed < fill ? needed : fill;
}

inline int64_t groups_cap(int64_t n) {
  const int64_t most = static_cast<int64_t>(device().sms) * 64;
  return n < most ? n : most;
}

/// Whether `p` may be read or written four elements at a time (kiln_vec4<T> of the
/// contiguous Elemwise path: aligned to 4 items up to 16 bytes). cudaMalloc'd memory is, a
/// caller's pointer (DLPack data plus byte_offset) or a view may not be: the scalar loop.
template <typename T>
inline bool vec4_aligned(const T* p) {
  const uintptr_t align = sizeof(T) * 4 < 16 ? sizeof(T) * 4 : 16;
  return reinterpret_cast<uintptr_t>(p) % align == 0;
}

inline int64_t reduce_chunks(int64_t n_out, int64_t n_red) {
  if (n_out <= 0) return 1;
  const int64_t want = static_cast<int64_t>(device().sms) * 8 / n_out;
  const int64_t most = (n_red + 4 * kGroup - 1) / (4 * kGroup);
  const int64_t c = want < most ? want : most;
  return c > 1 ? c : 1;
}

/// Chunks per output of a reduction with one work-item per output and chunk: enough
/// work-items in all to fill the device a few times over, each folding at least 32 elements.
inline int64_t lane_chunks(int64_t n_out, int64_t n_red) {
  if (n_out <= 0) return 1;
  const int64_t want = static_cast<int64_t>(device().sms) * 8 * kGroup / n_out;
  const int64_t most = n_red / 32;
  const int64_t c = want < most ? want : most;
  return c > 1 ? c : 1;
}

/// Records `check` for a checking kernel about to be launched and gives the kernel's arguments:
/// the status word and the number it writes there. The call's first check queues the word's
/// reset on the stream (ordered before the kernel; nothing waits).
inline int32_t arm_status(Ctx* ctx, const StatusCheck& check, int32_t*& word, int64_t& number) {
  DevCtx* d = dev_of(ctx);
  cudaError_t e = cudaSuccess;
  if (!d->status) e = cudaMallocAsync(reinterpret_cast<void**>(&d->status), 4 * sizeof(int32_t), d->stream);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "cudaMallocAsync");
  if (!d->status_log.armed) {
    e = cudaMemsetAsync(d->status, 0, 4 * sizeof(int32_t), d->stream);
    if (e != cudaSuccess) return cuda_fail(ctx, e, "resetting the status word");
    d->status_log.armed = true;
  }
  d->status_log.checks.push_back(check);
  word = d->status;
  number = static_cast<int64_t>(d->status_log.checks.size());
  return KILN_OK;
}

/// Ends a call that returns `status`: when it launched checking kernels, reads the status word
/// (one copy and a wait on the stream) and returns the first error they found instead (it
/// happened at an earlier node than any error the host found after it).
inline int32_t end_status(Ctx* ctx, int32_t status) {
  DevCtx* d = dev_of(ctx);
  if (!d->status_log.armed) return status;
  d->status_log.armed = false;
  int32_t word[4] = {};
  cudaError_t e = cudaMemcpyAsync(word, d->status, sizeof word, cudaMemcpyDeviceToHost, d->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
  if (e != cudaSuccess) return status != KILN_OK ? status : cuda_fail(ctx, e, "reading the status word");
  return word[0] != 0 ? status_failure(ctx, d->status_log, word) : status;
}

/// Sets every element of a contiguous device tensor (a new output or workspace) to zero bits,
/// ordered on the context's stream (AllocEmpty's fill; nothing waits).
template <typename T, int N>
inline int32_t zero_fill(Ctx* ctx, DTensor<T, N>& t) {
  const int64_t n = t.size();
  if (n == 0) return KILN_OK;
  const cudaError_t e = cudaMemsetAsync(t.data, 0, static_cast<size_t>(n) * sizeof(T), dev_of(ctx)->stream);
  return e == cudaSuccess ? KILN_OK : cuda_fail(ctx, e, "cudaMemsetAsync");
}

/// Copies src into dst (same shape; any strides) with the strided copy kernel of its item size.
template <typename T, int N>
inline int32_t copy_tensor(Ctx* ctx, const DTensor<T, N>& src, DTensor<T, N>& dst) {
  static_assert(N <= 6, "device copies handle rank 6 at most");
  using U = typename std::conditional<sizeof(T) == 1, uint8_t, typename std::conditional<sizeof(T) == 2, uint16_t,
            typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type;
  int64_t len[6] = {1, 1, 1, 1, 1, 1}, ss[6] = {}, ds[6] = {};
  for (int i = 0; i < N; ++i) {
    len[6 - N + i] = src.shape[i];
    ss[6 - N + i] = src.strides[i];
    ds[6 - N + i] = dst.strides[i];
  }
  const int64_t n = src.size();
  auto* s = reinterpret_cast<const U*>(src.data);
  auto* d = reinterpret_cast<U*>(dst.data);
  const auto kernel = [] {
    if constexpr (sizeof(T) == 1) return kiln_copy_1;
    else if constexpr (sizeof(T) == 2) return kiln_copy_2;
    else if constexpr (sizeof(T) == 4) return kiln_copy_4;
    else return kiln_copy_8;
  }();
  return launch(ctx, kernel, groups_for(n), kGroup, s, d, n, len[0], len[1], len[2], len[3], len[4], len[5], ss[0], ss[1],
                ss[2], ss[3], ss[4], ss[5], ds[0], ds[1], ds[2], ds[3], ds[4], ds[5]);
}

/// Writes n int64 values the host computed (Shape's lengths) to dst, eight per launch of the
/// put kernel: the values travel as kernel arguments, so no host buffer must outlive the call.
inline int32_t put_int64(Ctx* ctx, DevPtr<int64_t> dst, const int64_t* v, int64_t n) {
  for (int64_t at = 0; at < n; at += 8) {
    int64_t a[8] = {};
    const int64_t k = n - at < 8 ? n - at : 8;
    for (int64_t i = 0; i < k; ++i) a[i] = v[at + i];
    KILN_TRY(launch(ctx, kiln_put_int64, 1, 8, dst + at, k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]));
  }
  return KILN_OK;
}

/// n elements from p on by `stride` (any sign, 0 included) read to host memory `out` in one
/// copy on the context's stream that waits for it (a pitched copy of one-element rows).
template <typename T>
inline int32_t read_elements(Ctx* ctx, DevPtr<T> p, int64_t n, int64_t stride, T* out) {
  if (n <= 0) return KILN_OK;
  cudaStream_t stream = dev_of(ctx)->stream;
  cudaError_t e;
  if (stride == 0 || stride == 1 || n == 1) {
    e = cudaMemcpyAsync(out, p, (stride == 0 ? 1 : static_cast<size_t>(n)) * sizeof(T), cudaMemcpyDeviceToHost, stream);
  } else {
    const T* first = stride > 0 ? p : p + (n - 1) * stride;
    const size_t step = static_cast<size_t>(stride > 0 ? stride : -stride) * sizeof(T);
    e = cudaMemcpy2DAsync(out, sizeof(T), first, step, sizeof(T), static_cast<size_t>(n), cudaMemcpyDeviceToHost, stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "reading device elements");
  if (stride == 0)
    for (int64_t i = 1; i < n; ++i) out[i] = out[0];
  if (stride < 0)
    for (int64_t i = 0, j = n - 1; i < j; ++i, --j) std::swap(out[i], out[j]);
  return KILN_OK;
}

/// Uploads n host values to the contiguous device tensor t on the context's stream (from
/// pageable memory the copy is staged before the call returns, so the host memory may change
/// after it; used where the host computed a small table, Repeat's offsets).
template <typename T, int N>
inline int32_t write_elements(Ctx* ctx, DTensor<T, N>& t, const T* host, int64_t n) {
  if (n <= 0) return KILN_OK;
  const cudaError_t e = cudaMemcpyAsync(t.data, host, static_cast<size_t>(n) * sizeof(T), cudaMemcpyHostToDevice,
                                        dev_of(ctx)->stream);
  return e == cudaSuccess ? KILN_OK : cuda_fail(ctx, e, "uploading to the device");
}

/// The element of type U `bytes` after p (parts of one workspace buffer holding arrays of
/// several types; `bytes` keeps U's alignment).
template <typename U, typename T>
inline DevPtr<U> retype(DevPtr<T> p, int64_t bytes) {
  return reinterpret_cast<U*>(reinterpret_cast<char*>(p) + bytes);
}

/// A DLTensor's data, byte_offset and device for a device position (Scan passes rows of its
/// buffers to its step function as DLTensors), and the position a DLTensor describes.
template <typename T>
inline void set_dl_data(DLTensor& d, DevPtr<T> p) {
  d.data = const_cast<void*>(static_cast<const void*>(p));
  d.byte_offset = 0;
  d.device = DLDevice{kDLCUDA, device().id};
}
template <typename T>
inline DevPtr<T> dl_data(const DLTensor& d) {
  return reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
}

}  // namespace kg
