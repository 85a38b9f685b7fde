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
