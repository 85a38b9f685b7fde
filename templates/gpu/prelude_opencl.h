// OpenCL C prelude of kiln's kernels: the fixed-width integer names the shared kernel text
// uses, 64-bit floats, and the dialect's function qualifier.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define KILN_FN static inline
#define KILN_INF INFINITY

// A kernel's error: the first to claim the device status word wins (check number, payload;
// templates/gpu/prologue/device_status.hpp).
KILN_FN void kiln_raise(__global int32_t* st, const int64_t check, const int64_t value) {
  if (atomic_cmpxchg((volatile __global int*)st, 0, (int)check) == 0) *(__global int64_t*)(st + 2) = value;
}

// The accumulating scatter's adds (indexing.mustache, scatter_atomic): 32-bit integers with
// OpenCL 1.2's atomic_add, 64-bit ones with cl_khr_int64_base_atomics' atom_add, floats by a
// compare-and-swap loop on their bits. Without the 64-bit extension the host never launches the
// kernels that need it (kg::Device::int64_atomics) and the plain adds below only keep them
// compilable.
KILN_FN void kiln_atomic_add_int32_t(__global int32_t* p, const int32_t v) { atomic_add((volatile __global int*)p, v); }
KILN_FN void kiln_atomic_add_uint32_t(__global uint32_t* p, const uint32_t v) { atomic_add((volatile __global uint*)p, v); }
KILN_FN void kiln_atomic_add_float(__global float* p, const float v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint old = *u, seen;
  while ((seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v))) != old) old = seen;
}
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
KILN_FN void kiln_atomic_add_int64_t(__global int64_t* p, const int64_t v) { atom_add((volatile __global long*)p, v); }
KILN_FN void kiln_atomic_add_uint64_t(__global uint64_t* p, const uint64_t v) { atom_add((volatile __global ulong*)p, v); }
KILN_FN void kiln_atomic_add_double(__global double* p, const double v) {
  volatile __global ulong* u = (volatile __global ulong*)p;
  ulong old = *u, seen;
  while ((seen = atom_cmpxchg(u, old, as_ulong(as_double(old) + v))) != old) old = seen;
}
#else
KILN_FN void kiln_atomic_add_int64_t(__global int64_t* p, const int64_t v) { *p += v; }
KILN_FN void kiln_atomic_add_uint64_t(__global uint64_t* p, const uint64_t v) { *p += v; }
KILN_FN void kiln_atomic_add_double(__global double* p, const double v) { *p += v; }
#endif
