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
