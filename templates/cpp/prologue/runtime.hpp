// kiln generated-code runtime: tensors over buffers, the per-call context, input binding,
// workspace and output allocation, error reporting, and small loop helpers.
//
// This file is embedded into every generated source inside an anonymous namespace (its
// #include lines are hoisted above it), so two generated libraries linked into one program
// never share or clash over these definitions. It is plain C++17 and compiles on its own.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include <dlfcn.h>     // dlopen (pinning libgomp, below)
#include <sys/mman.h>  // madvise (transparent huge pages for large buffers)
#include <unistd.h>    // sysconf (the number of processors)

#include <dlpack/dlpack.h>

#include "kiln/kiln.h"

namespace kg {

/// A typed view of a buffer: data points at element [0,...,0]; strides are in elements.
///
/// Sizes never overflow: every tensor a call works on was checked once, when it was bound
/// (bind_input), allocated (alloc_workspace, alloc_output) or built into the library
/// (constants), to obey NumPy's limit — the product of its nonzero lengths times its item size
/// fits in int64_t — and, for inputs, to span no more than that many bytes with its strides.
/// So size(), byte counts, C-contiguous strides and every element offset fit in int64_t, and
/// the loops need no checks of their own. Views made from a tensor stay within it.
template <typename T, int N>
struct Tensor {
  T* data = nullptr;
  int64_t shape[N > 0 ? N : 1] = {};
  int64_t strides[N > 0 ? N : 1] = {};

  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < N; ++i) n *= shape[i];
    return n;
  }
  /// Sets C-contiguous strides for the current shape.
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

/// A workspace buffer kept by the context across calls (grown on demand, never shrunk).
struct Slot {
  void* data = nullptr;
  size_t capacity = 0;
};

/// A graph output's allocation in "call" mode (handed over as a DLManagedTensor).
struct OwnedOutput {
  DLManagedTensor managed;
  int64_t shape[16];
  void* buffer;
  bool separate;  ///< buffer is its own allocation (large outputs), not part of this block
};

/// The per-thread state of a generated graph. Callers see it as the opaque kiln_context; each
/// generated library casts to its own private Ctx (so libraries never share a definition).
struct Ctx {
  char error[1024];
  int32_t num_threads;
  int32_t num_slots;
  Slot* slots;
  const void* graph;  ///< identifies the graph that created the context
};

/// The thread count a context takes for a request: at least 1, and at most four per online
/// processor (1024 at most). More only oversubscribes the machine, and asking libgomp for more
/// threads than the system allows aborts the process.
inline int32_t thread_count(int32_t requested) {
  static const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long most = cpus > 0 ? (cpus < 256 ? 4 * cpus : 1024) : 1;
  return requested < 1 ? 1 : requested > most ? static_cast<int32_t>(most) : requested;
}

inline Ctx* ctx_of(kiln_context* c) { return reinterpret_cast<Ctx*>(c); }
inline const Ctx* ctx_of(const kiln_context* c) { return reinterpret_cast<const Ctx*>(c); }
inline kiln_context* handle_of(Ctx* c) { return reinterpret_cast<kiln_context*>(c); }

/// A new context with `num_slots` workspace slots for `graph`; null when out of memory.
inline Ctx* create_context(int32_t num_slots, const void* graph) {
  auto* c = static_cast<Ctx*>(std::calloc(1, sizeof(Ctx)));
  if (!c) return nullptr;
  c->graph = graph;
  c->num_threads = 1;
  c->num_slots = num_slots;
  c->slots = static_cast<Slot*>(std::calloc(static_cast<size_t>(num_slots > 0 ? num_slots : 1), sizeof(Slot)));
  if (!c->slots) {
    std::free(c);
    return nullptr;
  }
  return c;
}

inline void destroy_context(Ctx* c) {
  if (!c) return;
  for (int32_t i = 0; i < c->num_slots; ++i) std::free(c->slots[i].data);
  std::free(c->slots);
  std::free(c);
}

/// How the current run hands over its outputs.
struct OutputSink {
  bool caller_provided = false;     // call_into: write into `given`
  DLTensor* given = nullptr;        // caller's outputs (call_into)
  DLManagedTensor** owned = nullptr;  // call: receives new tensors
  int32_t count = 0;
};

inline int32_t fail(Ctx* ctx, int32_t status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Records an error message in the context and returns `status`.
inline int32_t fail(Ctx* ctx, int32_t status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(ctx->error, sizeof ctx->error, fmt, args);
  va_end(args);
  return status;
}

/// Prefixes the context's message with the place of a failure (a node), keeping the status.
inline int32_t at_node(Ctx* ctx, int32_t status, const char* where) {
  char tmp[sizeof ctx->error];
  std::snprintf(tmp, sizeof tmp, "%s: %s", where, ctx->error);
  std::memcpy(ctx->error, tmp, sizeof tmp);
  return status;
}

/// Runs one call of a graph so that no C++ exception leaves the library (kiln.h promises none
/// crosses the C ABI): a std::vector of the runtime (a random variable's draws, a permutation's
/// rows) that cannot get its memory throws std::bad_alloc, which becomes KILN_ERR_ALLOC here.
template <typename F>
inline int32_t no_throw(Ctx* ctx, F&& run) {
#if defined(__cpp_exceptions)
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return fail(ctx, KILN_ERR_ALLOC, "out of memory: a buffer of the call could not be allocated");
  } catch (const std::exception& e) {
    return fail(ctx, KILN_ERR_INTERNAL, "unexpected C++ exception: %s", e.what());
  } catch (...) {
    return fail(ctx, KILN_ERR_INTERNAL, "unexpected C++ exception");
  }
#else
  return run();
#endif
}

#define KILN_TRY(expr)            \
  do {                            \
    int32_t kiln_status_ = (expr); \
    if (kiln_status_) return kiln_status_; \
  } while (0)

#define KILN_TRY_AT(expr, where)                                        \
  do {                                                                  \
    int32_t kiln_status_ = (expr);                                       \
    if (kiln_status_) return ::kg::at_node(ctx, kiln_status_, (where));  \
  } while (0)

inline const char* dtype_text(DLDataType t) {
  if (t.lanes != 1) return "vector dtype";
  switch (t.code) {
    case 6: return t.bits == 8 ? "bool" : "bool(?)";
    case kDLInt:
      return t.bits == 8 ? "int8" : t.bits == 16 ? "int16" : t.bits == 32 ? "int32" : t.bits == 64 ? "int64" : "int?";
    case kDLUInt:
      return t.bits == 8 ? "uint8" : t.bits == 16 ? "uint16" : t.bits == 32 ? "uint32" : t.bits == 64 ? "uint64" : "uint?";
    case kDLFloat: return t.bits == 32 ? "float32" : t.bits == 64 ? "float64" : "float?";
    default: return "unsupported dtype";
  }
}

/// Writes a shape as Python prints a tuple: "(2, 3)", "(3,)", "()".
inline void shape_text(char* buf, size_t size, const int64_t* shape, int n) {
  size_t pos = 0;
  auto append = [&](const char* text) {
    for (; *text && pos + 1 < size; ++text) buf[pos++] = *text;
    buf[pos] = '\0';
  };
  char num[32];
  append("(");
  for (int i = 0; i < n; ++i) {
    if (i) append(", ");
    std::snprintf(num, sizeof num, "%lld", static_cast<long long>(shape[i]));
    append(num);
  }
  append(n == 1 ? ",)" : ")");
}

/// Calls f(offset) for every element of `shape` with per-tensor strides, in row-major order;
/// offsets[k] is the element offset into tensor k. The workhorse of non-contiguous loops.
template <int N, int K, typename F>
inline void for_each_strided(const int64_t* shape, const int64_t (&strides)[K][N > 0 ? N : 1], F&& f) {
  int64_t offsets[K] = {};
  if (N == 0) {
    f(offsets);
    return;
  }
  for (int i = 0; i < N; ++i)
    if (shape[i] == 0) return;
  int64_t idx[N > 0 ? N : 1] = {};
  while (true) {
    f(offsets);
    int d = N - 1;
    for (; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < K; ++k) offsets[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (int k = 0; k < K; ++k) offsets[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// The number of elements of a shape when it obeys NumPy's limit on arrays (the product of its
/// nonzero lengths times `itemsize` fits in int64_t, so no size, byte count or contiguous
/// stride of it overflows); -1 for a negative length or a shape over the limit.
inline int64_t checked_size(const int64_t* shape, int n, size_t itemsize) {
  int64_t bytes = static_cast<int64_t>(itemsize), elements = 1;  // (no division: this is on every call)
  for (int i = 0; i < n; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) elements = 0;
    else if (__builtin_mul_overflow(bytes, shape[i], &bytes)) return -1;
    elements *= shape[i];  // at most bytes: no overflow
  }
  return elements;
}

/// Fails with "<what> of shape (a, b) is too big: array is too big ..." (NumPy's words), or
/// "... has a negative length"; <what> is `input "<input>"` for an input, else `what`.
__attribute__((noinline, cold)) inline int32_t fail_too_big(Ctx* ctx, int32_t status, const char* input,
                                                            const char* what, const int64_t* shape, int n,
                                                            size_t itemsize) {
  char text[256], who[320];
  shape_text(text, sizeof text, shape, n);
  if (input)
    std::snprintf(who, sizeof who, "input \"%s\"", input);
  else
    std::snprintf(who, sizeof who, "%s", what);
  for (int i = 0; i < n; ++i)
    if (shape[i] < 0) return fail(ctx, status, "%s of shape %s has a negative length", who, text);
  return fail(ctx, status, "%s of shape %s is too big: array is too big (%zu-byte elements, more than 2^63 - 1 bytes in all)",
              who, text, itemsize);
}

/// Checks that a caller's non-empty tensor of `n` dimensions with strides spans a range of
/// addresses that exists: every element offset, one past each dimension's end included, fits
/// in int64_t bytes, and data + byte_offset + that range does not wrap. Sets `first` to
/// element [0,...,0]. Returns false when it does not.
__attribute__((noinline)) inline bool strided_range_ok(const DLTensor& t, int n, size_t itemsize, uintptr_t& first) {
  uint64_t below = 0, above = 0;  // bytes before and after element [0,...,0]
  for (int i = 0; i < n; ++i) {
    if (t.shape[i] == 1) continue;  // a length-1 dimension's stride is never used
    const int64_t s = t.strides[i];
    // |s| * shape * itemsize, in unsigned arithmetic (|INT64_MIN| fits in uint64_t).
    const uint64_t mag = s < 0 ? uint64_t{0} - static_cast<uint64_t>(s) : static_cast<uint64_t>(s);
    uint64_t span;
    if (__builtin_mul_overflow(mag, static_cast<uint64_t>(t.shape[i]), &span) ||
        __builtin_mul_overflow(span, static_cast<uint64_t>(itemsize), &span))
      return false;
    if (__builtin_add_overflow(s < 0 ? below : above, span, s < 0 ? &below : &above)) return false;
    if (below > static_cast<uint64_t>(INT64_MAX) || above > static_cast<uint64_t>(INT64_MAX)) return false;
  }
  const uintptr_t data = reinterpret_cast<uintptr_t>(t.data);
  uintptr_t end;
  return !__builtin_add_overflow(data, static_cast<uintptr_t>(t.byte_offset), &first) && first >= below &&
         !__builtin_add_overflow(first, static_cast<uintptr_t>(above), &end);
}

/// A bool tensor's bytes are all 0 or 1 (any other byte is not a bool: reading one is
/// undefined behaviour).
template <typename T, int N>
__attribute__((noinline)) inline bool bool_bytes_ok(const Tensor<T, N>& t) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(t.data);
  unsigned char bits = 0;
  if (t.is_contiguous()) {
    const int64_t n = t.size();
    for (int64_t e = 0; e < n; ++e) bits |= p[e];
  } else {
    int64_t strides[1][N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) strides[0][d] = t.strides[d];
    for_each_strided<N, 1>(t.shape, strides, [&](const int64_t* off) { bits |= p[off[0]]; });
  }
  return (bits & 0xFE) == 0;
}

/// A caller's device type as the integer it holds. DLDeviceType has no fixed underlying type, so
/// reading a value outside its enumerators (a hostile caller's 12345) as the enum would be
/// undefined behaviour; its bytes are read instead.
inline int32_t device_type_of(const DLDevice& device) {
  std::underlying_type_t<DLDeviceType> code;
  std::memcpy(&code, &device.device_type, sizeof code);
  return static_cast<int32_t>(code);
}

/// Binds a caller's DLTensor to a typed view, checking device, dtype, rank, static lengths,
/// its size (NumPy's limit), the memory its strides span and its alignment; a bool input's
/// bytes must be 0 or 1. This runs once per input per call (never in loops) and is on the path
/// of every call, so the common case — C-contiguous strides, or none — costs a few
/// instructions per dimension; everything else is out of line. The strides of length-1
/// dimensions are never used (they become contiguous ones), and an empty tensor's are zeros.
template <typename T, int N>
__attribute__((always_inline)) inline int32_t bind_input(Ctx* ctx, const DLTensor& t, Tensor<T, N>& out,
                                                         DLDataType want, const int64_t* static_shape,
                                                         const char* name) {
  if (device_type_of(t.device) != kDLCPU && device_type_of(t.device) != kDLCUDAHost)
    return fail(ctx, KILN_ERR_DEVICE, "input \"%s\" is not in CPU memory", name);
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1)
    return fail(ctx, KILN_ERR_INPUT_DTYPE, "input \"%s\" must be %s, got %s", name, dtype_text(want),
                dtype_text(t.dtype));
  if (t.ndim != N)
    return fail(ctx, KILN_ERR_INPUT_RANK, "input \"%s\" must have %d dimension(s), got %d", name, N,
                static_cast<int>(t.ndim));
  if (N > 0 && t.shape == nullptr) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" has no shape", name);
  // One pass from the last dimension: lengths, NumPy's size limit, C-contiguous strides.
  int64_t bytes = static_cast<int64_t>(sizeof(T));
  uint64_t elements = 1;  // of the dimensions after i (unsigned: it may wrap when too big)
  bool too_big = false, contiguous = true;
  for (int i = N - 1; i >= 0; --i) {
    const int64_t len = t.shape[i];
    if (len < 0) return fail(ctx, KILN_ERR_INPUT_SHAPE, "input \"%s\" has a negative length", name);
    if (static_shape[i] >= 0 && len != static_shape[i])
      return fail(ctx, KILN_ERR_INPUT_SHAPE, "input \"%s\" must have length %lld in dimension %d, got %lld",
                  name, static_cast<long long>(static_shape[i]), i, static_cast<long long>(len));
    out.shape[i] = len;
    out.strides[i] = static_cast<int64_t>(elements);
    if (t.strides && len != 1 && t.strides[i] != static_cast<int64_t>(elements)) contiguous = false;
    elements *= static_cast<uint64_t>(len);
    if (len > 0) too_big |= __builtin_mul_overflow(bytes, len, &bytes);
  }
  if (too_big) return fail_too_big(ctx, KILN_ERR_INPUT_SHAPE, name, nullptr, out.shape, N, sizeof(T));
  if (elements == 0) {  // never read: its address is only passed along, its strides are zeros
    for (int i = 0; i < N; ++i) out.strides[i] = 0;
    out.data = reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(t.data) + static_cast<uintptr_t>(t.byte_offset));
    return KILN_OK;
  }
  if (t.data == nullptr) return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" has no data", name);
  uintptr_t first, end;
  const bool in_range =
      contiguous ? !__builtin_add_overflow(reinterpret_cast<uintptr_t>(t.data), static_cast<uintptr_t>(t.byte_offset), &first) &&
                       !__builtin_add_overflow(first, static_cast<uintptr_t>(bytes), &end)
                 : strided_range_ok(t, N, sizeof(T), first);
  if (!in_range)
    return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\": its strides and byte_offset address memory beyond 2^63 bytes",
                name);
  if (first % alignof(T) != 0)
    return fail(ctx, KILN_ERR_ARGUMENT, "input \"%s\" is not aligned to %zu bytes", name, alignof(T));
  out.data = reinterpret_cast<T*>(first);
  if (!contiguous)
    for (int i = 0; i < N; ++i)
      if (t.shape[i] != 1) out.strides[i] = t.strides[i];
  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) {
    if (!bool_bytes_ok(out)) return fail(ctx, KILN_ERR_VALUE, "input \"%s\" is bool but holds a byte other than 0 or 1", name);
  }
  return KILN_OK;
}

/// Buffers of at least this many bytes are 2 MiB aligned and advised for transparent huge
/// pages: the first write into fresh memory then takes one page fault per 2 MiB instead of one
/// per 4 KiB (128 MiB: ~16 ms instead of ~55 ms on the machine this was measured on).
constexpr size_t kHugePageThreshold = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

/// A 64-byte aligned buffer of at least `bytes` bytes (huge-page backed when large), or null.
/// Free it with std::free.
inline void* alloc_buffer(size_t bytes) {
  if (bytes >= kHugePageThreshold) {
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure (no THP) is harmless
#endif
    return p;
  }
  const size_t rounded = (bytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded ? rounded : 64);
}

/// A heap buffer of a node's step (operands BLAS cannot read in place, Unique's table), reused
/// across the iterations of one step (the batch loops) and freed at scope exit.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(data_); }

  /// Points `out` at >= `bytes` bytes (64-byte aligned).
  int32_t reserve(Ctx* ctx, size_t bytes, void*& out) {
    if (data_ == nullptr || bytes > capacity_) {
      std::free(data_);
      capacity_ = bytes ? (bytes + 63) / 64 * 64 : 64;
      data_ = std::aligned_alloc(64, capacity_);
      if (data_ == nullptr) {
        capacity_ = 0;
        return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes", bytes);
      }
    }
    out = data_;
    return KILN_OK;
  }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

/// Points a view at a buffer of the context's workspace slot, growing it when needed. A slot
/// is kept across calls and never shrinks, so steady-state calls allocate nothing; it grows by
/// at least half its size so slowly growing inputs do not reallocate on every call.
template <typename T, int N>
inline int32_t alloc_workspace(Ctx* ctx, int slot, Tensor<T, N>& t) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an intermediate array", t.shape, N, sizeof(T));
  const size_t bytes = static_cast<size_t>(size) * sizeof(T);
  Slot& s = ctx->slots[slot];
  if (s.capacity < bytes || s.data == nullptr) {
    std::free(s.data);
    size_t want = bytes;
    if (s.capacity > 0 && want < s.capacity + s.capacity / 2) want = s.capacity + s.capacity / 2;
    s.data = alloc_buffer(want);
    if (!s.data) {
      s.capacity = 0;
      return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes", bytes);
    }
    s.capacity = want;
  }
  t.data = static_cast<T*>(s.data);
  t.set_contiguous_strides();
  return KILN_OK;
}

inline void free_owned(DLManagedTensor* m) {
  auto* o = reinterpret_cast<OwnedOutput*>(m);
  if (o->separate) std::free(o->buffer);
  std::free(o);
}

/// Points a graph output's view at its final memory: a new buffer handed to the caller
/// ("call"), or the caller's tensor after checking its dtype, shape and layout ("call_into").
template <typename T, int N>
inline int32_t alloc_output(Ctx* ctx, OutputSink& sink, int k, Tensor<T, N>& t, DLDataType dt) {
  if (sink.caller_provided) {
    DLTensor& d = sink.given[k];
    if (device_type_of(d.device) != kDLCPU && device_type_of(d.device) != kDLCUDAHost)
      return fail(ctx, KILN_ERR_DEVICE, "output %d is not in CPU memory", k);
    if (d.dtype.code != dt.code || d.dtype.bits != dt.bits || d.dtype.lanes != 1)
      return fail(ctx, KILN_ERR_OUTPUT, "output %d must be %s, got %s", k, dtype_text(dt), dtype_text(d.dtype));
    if (d.ndim != N) return fail(ctx, KILN_ERR_OUTPUT, "output %d must have %d dimension(s), got %d", k, N, static_cast<int>(d.ndim));
    if (N > 0 && d.shape == nullptr) return fail(ctx, KILN_ERR_OUTPUT, "output %d has no shape", k);
    // One pass from the last dimension (this is on every call_into): the caller's lengths,
    // NumPy's size limit, C-contiguous strides (any strides describe an empty tensor).
    int64_t bytes = static_cast<int64_t>(sizeof(T));
    uint64_t elements = 1;  // of the dimensions after i (unsigned: it may wrap when too big)
    bool too_big = false, strided = false;
    for (int i = N - 1; i >= 0; --i) {
      const int64_t len = t.shape[i];
      if (d.shape[i] != len)
        return fail(ctx, KILN_ERR_OUTPUT, "output %d must have length %lld in dimension %d, got %lld", k,
                    static_cast<long long>(len), i, static_cast<long long>(d.shape[i]));
      if (d.strides && len != 1 && d.strides[i] != static_cast<int64_t>(elements)) strided = true;
      t.strides[i] = static_cast<int64_t>(elements);
      elements *= static_cast<uint64_t>(len);
      if (len != 0) too_big |= len < 0 || __builtin_mul_overflow(bytes, len, &bytes);
    }
    if (too_big) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an output array", t.shape, N, sizeof(T));
    uintptr_t first = reinterpret_cast<uintptr_t>(d.data), end;
    if (elements == 0) {
      t.data = reinterpret_cast<T*>(first + static_cast<uintptr_t>(d.byte_offset));
      t.set_contiguous_strides();
      return KILN_OK;
    }
    if (strided) return fail(ctx, KILN_ERR_OUTPUT, "output %d must be C-contiguous", k);
    if (d.data == nullptr) return fail(ctx, KILN_ERR_OUTPUT, "output %d has no data", k);
    if (__builtin_add_overflow(first, static_cast<uintptr_t>(d.byte_offset), &first) ||
        __builtin_add_overflow(first, static_cast<uintptr_t>(bytes), &end))
      return fail(ctx, KILN_ERR_OUTPUT, "output %d: data + byte_offset + its size wraps around memory", k);
    if (first % alignof(T) != 0) return fail(ctx, KILN_ERR_OUTPUT, "output %d is not aligned to %zu bytes", k, alignof(T));
    t.data = reinterpret_cast<T*>(first);
    return KILN_OK;
  }
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an output array", t.shape, N, sizeof(T));
  static_assert(N <= 16, "rank above 16");
  // One plain malloc holds the header and a small output's data (64-byte aligned inside it:
  // malloc's small-size caches make this far cheaper than aligned_alloc); a large output gets
  // its own huge-page buffer. (Outputs are not recycled: the deleter may run on any thread,
  // after the context is gone. call_into is the path that allocates nothing.)
  const size_t bytes = static_cast<size_t>(size) * sizeof(T);
  const bool inline_data = bytes < kHugePageThreshold;
  const size_t total = sizeof(OwnedOutput) + (inline_data ? 63 + bytes : 0);
  auto* o = static_cast<OwnedOutput*>(std::malloc(total));
  if (!o) return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes", total);
  new (o) OwnedOutput{};
  o->separate = !inline_data;
  if (inline_data) {
    const uintptr_t end = reinterpret_cast<uintptr_t>(o + 1);
    o->buffer = reinterpret_cast<void*>((end + 63) / 64 * 64);
  } else {
    o->buffer = alloc_buffer(bytes);
  }
  if (!o->buffer) {
    std::free(o);
    return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes", bytes);
  }
  for (int i = 0; i < N; ++i) o->shape[i] = t.shape[i];
  DLTensor& d = o->managed.dl_tensor;
  d.data = o->buffer;
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = N;
  d.dtype = dt;
  d.shape = o->shape;
  d.strides = nullptr;
  d.byte_offset = 0;
  o->managed.manager_ctx = nullptr;
  o->managed.deleter = free_owned;
  if (sink.owned[k]) free_owned(sink.owned[k]);  // a previous failed attempt
  sink.owned[k] = &o->managed;
  t.data = static_cast<T*>(o->buffer);
  t.set_contiguous_strides();
  return KILN_OK;
}

/// The address of a graph constant of more than one element, as a pointer the compiler cannot
/// see through. GCC 12.2 with AVX-512VL (-march=x86-64-v4 or a native AVX-512 CPU) miscompiles
/// copies of constant bytes it knows: a 32-byte piece {a, a, a, 0} of a memcpy from a constant
/// array is stored as a broadcast of a (its const_wide_int drops the zero top element, and the
/// by-pieces store turns "repeats a" into vpbroadcastq), so an output that is the constant
/// [[1, 1, 1], [0, 0, 0]] came back as [[1, 1, 1], [1, 0, 0]]. Through an opaque pointer the
/// bytes are loaded from memory as written. Scalars stay visible: kernels fold them.
template <typename T>
inline T* opaque(const T* p) {
  T* q = const_cast<T*>(p);
  __asm__("" : "+r"(q));
  return q;
}

/// Copies src into dst (same shape; any strides).
template <typename T, int N>
inline void copy_tensor(const Tensor<T, N>& src, Tensor<T, N>& dst) {
  if (src.is_contiguous() && dst.is_contiguous()) {
    if (src.size() > 0 && src.data != dst.data) std::memmove(dst.data, src.data, static_cast<size_t>(src.size()) * sizeof(T));
    return;
  }
  int64_t strides[2][N > 0 ? N : 1];
  for (int i = 0; i < N; ++i) {
    strides[0][i] = src.strides[i];
    strides[1][i] = dst.strides[i];
  }
  const T* s = src.data;
  T* d = dst.data;
  for_each_strided<N, 2>(src.shape, strides, [&](const int64_t* off) { d[off[1]] = s[off[0]]; });
}

/// Checks that `len` of dimension `dim` agrees across the operands of an elementwise node
/// that are not statically broadcastable there; `out` receives the common length (or 1).
inline int32_t broadcast_length(Ctx* ctx, int64_t& out, int dim, const int64_t* lengths,
                                const bool* broadcastable, int count) {
  int owner = -1;
  out = 1;
  for (int k = 0; k < count; ++k) {
    if (broadcastable[k]) continue;
    if (owner < 0) {
      owner = k;
      out = lengths[k];
    } else if (lengths[k] != out) {
      bool runtime_broadcast = lengths[k] == 1 || out == 1;
      return fail(ctx, KILN_ERR_BROADCAST,
                  "%s: input %d has length %lld and input %d has length %lld in dimension %d",
                  runtime_broadcast ? "runtime broadcasting not allowed (only dimensions of static length 1 broadcast)"
                                    : "input dimension mismatch",
                  owner, static_cast<long long>(out), k, static_cast<long long>(lengths[k]), dim);
    }
  }
  return KILN_OK;
}

/// Checks a length against a static length the graph declared.
inline int32_t check_static_length(Ctx* ctx, int64_t actual, int64_t expected, int dim) {
  if (expected >= 0 && actual != expected)
    return fail(ctx, KILN_ERR_BROADCAST, "produced length %lld in dimension %d but the graph declares %lld",
                static_cast<long long>(actual), dim, static_cast<long long>(expected));
  return KILN_OK;
}

/// A Python slice resolved against a length: elements start, start + step, ... (count of them).
struct SliceRange {
  int64_t start;
  int64_t step;
  int64_t count;
};

/// Python's slice(start, stop, step).indices(length) (omitted parts have has_* false):
/// negative bounds count from the end, out-of-range bounds clip. Fails for a zero step.
inline int32_t resolve_slice(Ctx* ctx, int64_t length, bool has_start, int64_t start, bool has_stop,
                             int64_t stop, bool has_step, int64_t step, SliceRange& r) {
  const int64_t st = has_step ? step : 1;
  if (st == 0) return fail(ctx, KILN_ERR_VALUE, "slice step cannot be zero");
  auto bound = [&](bool given, int64_t v, int64_t dflt) {
    if (!given) return dflt;
    if (v < 0) {
      v += length;
      if (v < 0) v = st < 0 ? -1 : 0;
    } else if (v >= length) {
      v = st < 0 ? length - 1 : length;
    }
    return v;
  };
  const int64_t b = bound(has_start, start, st < 0 ? length - 1 : 0);
  const int64_t e = bound(has_stop, stop, st < 0 ? -1 : length);
  r.start = b;
  // (b - e - 1 < INT64_MAX, so dividing by INT64_MAX for a step of INT64_MIN gives 0 too.)
  r.count = st > 0 ? (e > b ? (e - b - 1) / st + 1 : 0) : (b > e ? (b - e - 1) / (st == INT64_MIN ? INT64_MAX : -st) + 1 : 0);
  // With at most one element the step is never taken: 1 keeps stride * step from overflowing.
  r.step = r.count > 1 ? st : 1;
  return KILN_OK;
}

/// Normalises index i (negative counts from the end) along an axis of `length` into j, or
/// fails with NumPy's "index 5 is out of bounds for axis 0 with size 4".
template <typename T>
inline int32_t check_index(Ctx* ctx, T i, int64_t length, int axis, int64_t& j) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (i > static_cast<uint64_t>(INT64_MAX))
      return fail(ctx, KILN_ERR_INDEX, "index %llu is out of bounds for axis %d with size %lld",
                  static_cast<unsigned long long>(i), axis, static_cast<long long>(length));
  }
  const int64_t v = static_cast<int64_t>(i);
  j = v < 0 ? v + length : v;
  if (j < 0 || j >= length)
    return fail(ctx, KILN_ERR_INDEX, "index %lld is out of bounds for axis %d with size %lld",
                static_cast<long long>(v), axis, static_cast<long long>(length));
  return KILN_OK;
}

/// Strides that broadcast a tensor (rank k: shape, strides) to `to` (rank n >= k), NumPy's
/// rules: 0 along new leading dimensions and stretched length-1 dimensions. Fails with
/// "cannot broadcast shape (3,) to (2, 2)".
inline int32_t broadcast_strides(Ctx* ctx, const int64_t* shape, const int64_t* strides, int k,
                                 const int64_t* to, int n, int64_t* out) {
  for (int d = 0; d < n; ++d) out[d] = 0;
  for (int d = 0; d < k; ++d) {
    const int64_t target = to[n - k + d];
    if (shape[d] == target) {
      out[n - k + d] = strides[d];
    } else if (shape[d] != 1) {
      char a[256], b[256];
      shape_text(a, sizeof a, shape, k);
      shape_text(b, sizeof b, to, n);
      return fail(ctx, KILN_ERR_BROADCAST, "cannot broadcast shape %s to %s", a, b);
    }
  }
  return KILN_OK;
}

/// Reads element i of a 0-d or 1-d integer (or bool) tensor as int64, whatever its stride.
/// Fails (KILN_ERR_VALUE, "integer too large") for a uint64 beyond int64's range.
template <typename T, int N>
inline int32_t read_int(Ctx* ctx, const Tensor<T, N>& t, int64_t i, int64_t& out) {
  static_assert(N <= 1, "read_int reads 0-d or 1-d tensors");
  const T v = t.data[N == 0 ? 0 : i * t.strides[0]];
  if constexpr (std::is_same_v<std::remove_cv_t<T>, uint64_t>) {
    if (v > static_cast<uint64_t>(INT64_MAX)) return fail(ctx, KILN_ERR_VALUE, "integer too large");
  }
  out = static_cast<int64_t>(v);
  return KILN_OK;
}

/// Reads a 0-d integer length; fails (KILN_ERR_VALUE) with "<what> is negative (-2)".
template <typename T>
inline int32_t read_length(Ctx* ctx, const Tensor<T, 0>& t, const char* what, int64_t& out) {
  KILN_TRY(read_int(ctx, t, 0, out));
  if (out < 0) return fail(ctx, KILN_ERR_VALUE, "%s is negative (%lld)", what, static_cast<long long>(out));
  return KILN_OK;
}

/// Elements above which loops run on several threads.
constexpr int64_t kParallelThreshold = 32768;

/// libgomp's pool threads outlive a parallel region (spinning, then sleeping inside libgomp).
/// When a host dlcloses a generated library that was the only user of libgomp, libgomp is
/// unmapped under them and the process crashes at exit. Pinning libgomp (no unload) when this
/// library is loaded avoids that; the library itself can still be unloaded.
__attribute__((constructor)) inline void pin_libgomp() {
#ifdef RTLD_NODELETE
  dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
}

/// Whether a loop over `work` elements should fork threads: above kParallelThreshold and with
/// more than one thread. Even `#pragma omp parallel for if (false)` enters libgomp
/// (GOMP_parallel with a team of one, about a microsecond), so a small loop must not reach an
/// OpenMP construct at all. The pattern for a loop that should stay vectorisable in place:
///   if (kg::use_threads(ctx, work)) {
///   #pragma omp parallel for num_threads(ctx->num_threads)
///     LOOP
///   } else {
///     LOOP
///   }
/// or, without repeating the loop, kg::parallel_for below.
inline bool use_threads(const Ctx* ctx, int64_t work) { return work > kParallelThreshold && ctx->num_threads > 1; }

/// Calls f(begin, end) on ranges covering [0, n): once as f(0, n) on the calling thread when
/// use_threads(ctx, work) says no, else on ctx->num_threads threads, one contiguous range each.
/// Where every thread still gets some, ranges start at multiples of 64: a vectorised loop then
/// sends the same elements through its vector and its scalar (remainder) path whatever the
/// thread count, so results do not depend on it (vector math functions and glibc's scalar ones
/// may differ in the last bits). Loops over a few heavy rows (integer matmul, Eye) keep an
/// even split.
template <typename F>
inline void parallel_for(const Ctx* ctx, int64_t n, int64_t work, F&& f) {
  if (n <= 0) return;
  if (!use_threads(ctx, work)) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t parts = ctx->num_threads < n ? ctx->num_threads : n;
  const int64_t even = (n + parts - 1) / parts;
  const int64_t chunk = n >= 64 * parts ? (even + 63) / 64 * 64 : even;
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts))
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t begin = p * chunk, end = begin + chunk < n ? begin + chunk : n;
    if (begin < end) f(begin, end);
  }
}

/// Calls f(i) for i in [0, count): on ctx->num_threads threads when `work` elements are worth
/// it (one row or block per call), else serially without entering an OpenMP region
/// (GOMP_parallel costs microseconds even when its `if` clause is false). The reductions,
/// softmax and cumulative templates split their work this way.
template <typename F>
inline void for_range(const Ctx* ctx, int64_t count, int64_t work, const F& f) {
  if (ctx->num_threads > 1 && count > 1 && work > kParallelThreshold) {
#pragma omp parallel for num_threads(ctx->num_threads)
    for (int64_t i = 0; i < count; ++i) f(i);
  } else {
    for (int64_t i = 0; i < count; ++i) f(i);
  }
}

// ---- row-block groups (codegen/row_block_fusion.h, emit_row_block.cpp) ----

/// Rows per block of a fused row-block pass: at most 8192 elements of X, so a block stays in
/// L1/L2 between its two uses and OpenBLAS never threads a block's gemv (it does from 9216
/// elements); and, where that leaves at least 64 rows, few enough that OpenBLAS's gemv keeps
/// its m + n + 16 element work buffer on the stack (MAX_STACK_ALLOC, 2048 bytes in Debian's
/// build) instead of taking it from its locked memory pool on every call, which threads running
/// blocks at the same time contend for. Between 8 and kRowBlockMax rows.
constexpr int64_t kRowBlockMax = 512;
inline int64_t row_block_rows(int64_t k, size_t itemsize) {
  int64_t rows = 8192 / (k > 0 ? k : 1);
  const int64_t stack_rows = static_cast<int64_t>(2048 / itemsize) - k - 24;
  if (stack_rows >= 64 && stack_rows < rows) rows = stack_rows;
  return rows < 8 ? 8 : rows > kRowBlockMax ? kRowBlockMax : rows;
}

/// A block's m elements of a vector with stride `stride`, as a unit-stride pointer: the vector
/// itself where the stride is 1, else `buffer` filled with them. The row-block pass's loop then
/// has one form, unit-stride loads, whatever the operands' layouts (one compiled loop, not one
/// per layout).
template <typename T>
inline const T* unit_stride_block(const T* first, int64_t stride, int64_t m, T* buffer) {
  if (stride == 1) return first;
  for (int64_t i = 0; i < m; ++i) buffer[i] = first[i * stride];
  return buffer;
}

/// Chunks of rows a fused row-block pass is cut into: at most 64, at least 1024 rows each,
/// and at most 2^21 partial values (`per_chunk` each) in all. From the shape alone, so the
/// result of a call never depends on its thread count.
inline int64_t row_chunks(int64_t n, int64_t per_chunk) {
  int64_t chunks = (n + 1023) / 1024;
  if (chunks > 64) chunks = 64;
  const int64_t room = (int64_t{1} << 21) / (per_chunk > 0 ? per_chunk : 1);
  if (chunks > room) chunks = room;
  return chunks < 1 ? 1 : chunks;
}

// ---- rows and column blocks of a tensor (reductions, argmax, scans, softmax:
// emit_reduce.cpp, emit_cumulative.cpp, emit_softmax.cpp) ----

/// A stride known at compile time to be 1: row kernels written as generic lambdas take it in
/// place of an int64_t stride, so their contiguous instantiation vectorises.
using UnitStride = std::integral_constant<int64_t, 1>;

/// A tensor's elements split into rows: the R dimensions listed in `axes` make up a row (in
/// C order), the other dimensions enumerate the rows (in C order).
template <int N, int R>
struct Rows {
  static constexpr int K = N - R;  ///< dimensions that enumerate rows
  int64_t count = 1;               ///< number of rows
  int64_t len = 1;                 ///< elements per row
  int64_t shape[R > 0 ? R : 1] = {};    ///< a row's dimensions
  int64_t strides[R > 0 ? R : 1] = {};
  int64_t kshape[K > 0 ? K : 1] = {};   ///< the other dimensions
  int64_t kstrides[K > 0 ? K : 1] = {};
  bool unit = true;   ///< a row is `len` consecutive elements
  bool dense = true;  ///< ...and row r starts at element r * len

  template <typename T>
  Rows(const Tensor<T, N>& t, const int (&axes)[R > 0 ? R : 1]) {
    bool in_row[N > 0 ? N : 1] = {};
    for (int j = 0; j < R; ++j) {
      in_row[axes[j]] = true;
      shape[j] = t.shape[axes[j]];
      strides[j] = t.strides[axes[j]];
      len *= shape[j];
    }
    for (int d = 0, i = 0; d < N; ++d) {
      if (in_row[d]) continue;
      kshape[i] = t.shape[d];
      kstrides[i] = t.strides[d];
      count *= kshape[i++];
    }
    int64_t s = 1;
    for (int j = R - 1; j >= 0; --j) {
      if (shape[j] != 1 && strides[j] != s) unit = false;
      s *= shape[j];
    }
    dense = unit;
    for (int i = K - 1; i >= 0; --i) {
      if (kshape[i] != 1 && kstrides[i] != s) dense = false;
      s *= kshape[i];
    }
  }

  /// Offset (in elements) of row r's first element.
  int64_t offset(int64_t r) const {
    if (dense) return r * len;
    int64_t off = 0;
    for (int i = K - 1; i >= 0; --i) {
      off += r % kshape[i] * kstrides[i];
      r /= kshape[i];
    }
    return off;
  }
};

/// Width of the blocks of neighbouring columns a kernel walks together over `groups` groups
/// of `columns` columns: at most `max_width`, and narrower (down to 64) when that is needed to
/// give each of `threads` threads a block of its own.
inline int64_t block_width(int64_t columns, int64_t groups, int64_t max_width, int threads) {
  int64_t width = max_width;
  if (groups > 0 && groups < threads) {
    const int64_t per_group = (threads + groups - 1) / groups;  // blocks wanted per group
    width = ((columns + per_group - 1) / per_group + 63) / 64 * 64;
    if (width > max_width) width = max_width;
  }
  return width > 0 ? width : 1;
}

// ---- end of rows and column blocks ----

}  // namespace kg
