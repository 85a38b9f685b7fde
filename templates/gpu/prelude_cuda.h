// CUDA prelude of kiln's kernels: fixed-width integers, the dialect's function qualifier, and
// the warp shuffle the reductions finish with (8- and 16-bit values travel as int).
#include <cstdint>
#define KILN_FN static __device__ inline
#define KILN_INF __longlong_as_double(0x7ff0000000000000LL)
template <typename T>
__device__ inline T kiln_shfl_down(T v, int o) {
  if constexpr (sizeof(T) < 4)
    return (T)__shfl_down_sync(0xffffffffu, (int)v, o);
  else
    return __shfl_down_sync(0xffffffffu, v, o);
}

// Four consecutive elements loaded or stored as one: aligned to 4 items up to 16 bytes, so
// float/int32 move as one 128-bit access, double/int64 as two, int8 as one 32-bit access
// (the host passes the vector path only pointers with that alignment: kg::vec4_aligned).
template <typename T>
struct alignas(sizeof(T) * 4 < 16 ? sizeof(T) * 4 : 16) kiln_vec4 {
  T v[4];
};

// A kernel's error: the first to claim the device status word wins (check number, payload;
// templates/gpu/prologue/device_status.hpp).
KILN_FN void kiln_raise(int32_t* st, const int64_t check, const int64_t value) {
  if (atomicCAS(reinterpret_cast<int*>(st), 0, static_cast<int>(check)) == 0)
    *reinterpret_cast<long long*>(st + 2) = value;
}

// The accumulating scatter's adds (indexing.mustache, scatter_atomic): CUDA's atomicAdd (64-bit
// integers as unsigned long long: two's complement adds alike; double needs sm_60).
KILN_FN void kiln_atomic_add_int32_t(int32_t* p, const int32_t v) { atomicAdd(reinterpret_cast<int*>(p), v); }
KILN_FN void kiln_atomic_add_uint32_t(uint32_t* p, const uint32_t v) { atomicAdd(reinterpret_cast<unsigned*>(p), v); }
KILN_FN void kiln_atomic_add_int64_t(int64_t* p, const int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
KILN_FN void kiln_atomic_add_uint64_t(uint64_t* p, const uint64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
KILN_FN void kiln_atomic_add_float(float* p, const float v) { atomicAdd(p, v); }
KILN_FN void kiln_atomic_add_double(double* p, const double v) { atomicAdd(p, v); }
