// Scalar helpers of kiln's GPU kernels, written once for every GPU dialect (OpenCL C and
// CUDA): the integer and float semantics NumPy defines and C leaves undefined or different
// (wrapping integer arithmetic, floor division and modulo by zero, NaN-propagating max/min,
// saturating float -> int conversion). The reference is runtime/include/kiln/runtime/
// scalar_math.hpp (the cpp backend's kiln_scalar); names carry the C type because OpenCL C
// has no overloading. KILN_FN comes from the dialect (templates/gpu/dialects.txt).

#define KILN_INT_OPS(T, U)                                                                     \
  KILN_FN T kiln_wrap_add_##T(T a, T b) { return (T)((U)a + (U)b); }                         \
  KILN_FN T kiln_wrap_sub_##T(T a, T b) { return (T)((U)a - (U)b); }                         \
  KILN_FN T kiln_wrap_mul_##T(T a, T b) { return (T)((U)a * (U)b); }                         \
  KILN_FN T kiln_wrap_neg_##T(T a) { return (T)((U)0 - (U)a); }                              \
  KILN_FN T kiln_abs_##T(T a) { return a < (T)0 ? kiln_wrap_neg_##T(a) : a; }               \
  KILN_FN T kiln_sgn_##T(T a) { return a > (T)0 ? (T)1 : a < (T)0 ? (T)-1 : (T)0; }        \
  KILN_FN T kiln_int_div_##T(T a, T b) {                                                     \
    if (b == (T)0) return (T)0;                                                              \
    if ((T)-1 < (T)0 && b == (T)-1) return kiln_wrap_neg_##T(a);                             \
    T q = (T)(a / b);                                                                         \
    if ((a % b != (T)0) && ((a < (T)0) != (b < (T)0))) q = (T)(q - (T)1);                    \
    return q;                                                                                 \
  }                                                                                           \
  KILN_FN T kiln_mod_##T(T a, T b) {                                                         \
    if (b == (T)0 || ((T)-1 < (T)0 && b == (T)-1)) return (T)0;                              \
    T r = (T)(a % b);                                                                         \
    if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);                             \
    return r;                                                                                 \
  }                                                                                           \
  KILN_FN T kiln_pow_##T(T a, T b) {                                                         \
    if (b < (T)0) return a == (T)1 ? (T)1 : a == (T)-1 ? (((b & (T)1) != (T)0) ? (T)-1 : (T)1) : (T)0; \
    U r = 1, x = (U)a;                                                                        \
    U e = (U)b;                                                                               \
    while (e) {                                                                               \
      if (e & 1u) r *= x;                                                                     \
      x *= x;                                                                                 \
      e >>= 1;                                                                                \
    }                                                                                         \
    return (T)r;                                                                              \
  }                                                                                           \
  KILN_FN T kiln_maximum_##T(T a, T b) { return a >= b ? a : b; }                            \
  KILN_FN T kiln_minimum_##T(T a, T b) { return a <= b ? a : b; }

KILN_INT_OPS(int8_t, uint8_t)
KILN_INT_OPS(int16_t, uint16_t)
KILN_INT_OPS(int32_t, uint32_t)
KILN_INT_OPS(int64_t, uint64_t)
KILN_INT_OPS(uint8_t, uint8_t)
KILN_INT_OPS(uint16_t, uint16_t)
KILN_INT_OPS(uint32_t, uint32_t)
KILN_INT_OPS(uint64_t, uint64_t)

#define KILN_FLOAT_OPS(T)                                                                      \
  KILN_FN T kiln_sgn_##T(T a) { return a > (T)0 ? (T)1 : a < (T)0 ? (T)-1 : a == (T)0 ? (T)0 : a; } \
  KILN_FN T kiln_maximum_##T(T a, T b) { return (isnan(a) || a >= b) ? a : b; }              \
  KILN_FN T kiln_minimum_##T(T a, T b) { return (isnan(a) || a <= b) ? a : b; }              \
  KILN_FN T kiln_int_div_##T(T a, T b) {                                                     \
    const T m = fmod(a, b);                                                                   \
    if (b == (T)0) return a / b;                                                              \
    T d = (a - m) / b;                                                                        \
    if (m != (T)0 && ((b < (T)0) != (m < (T)0))) d -= (T)1;                                   \
    if (d != (T)0) {                                                                          \
      T f = floor(d);                                                                         \
      if (d - f > (T)0.5) f += (T)1;                                                          \
      return f;                                                                               \
    }                                                                                         \
    return copysign((T)0, a / b);                                                             \
  }                                                                                           \
  KILN_FN T kiln_mod_##T(T a, T b) {                                                         \
    T m = fmod(a, b);                                                                         \
    if (b == (T)0) return m;                                                                  \
    if (m != (T)0) {                                                                          \
      if ((b < (T)0) != (m < (T)0)) m += b;                                                   \
    } else {                                                                                  \
      m = copysign((T)0, b);                                                                  \
    }                                                                                         \
    return m;                                                                                 \
  }                                                                                           \
  KILN_FN T kiln_sigmoid_##T(T x) {                                                          \
    const T e = exp(-fabs(x));                                                                \
    const T r = (T)1 / ((T)1 + e);                                                            \
    return x >= (T)0 ? r : e * r;                                                             \
  }                                                                                           \
  KILN_FN T kiln_softplus_##T(T x) { return (x > (T)0 ? x : (T)0) + log1p(exp(-fabs(x))); } \
  KILN_FN T kiln_round_half_away_##T(T x) { return round(x); }                              \
  KILN_FN T kiln_log1mexp_##T(T x) {                                                         \
    return x < (T)-0.6931471805599453 ? log1p(-exp(x)) : log(-expm1(x));                    \
  }

KILN_FLOAT_OPS(float)
KILN_FLOAT_OPS(double)

// float -> integer conversions saturate and send NaN to 0, as kiln_scalar::convert does (a C
// cast is undefined out of range).
#define KILN_FLOAT_TO_INT(F, T, LO, HI)                                                       \
  KILN_FN T kiln_convert_##F##_##T(F x) {                                                     \
    if (x != x) return (T)0;                                                                   \
    if (x <= (F)(LO)) return (T)(LO);                                                          \
    if (x >= (F)(HI)) return (T)(HI);                                                          \
    return (T)x;                                                                               \
  }
#define KILN_FLOAT_TO_INTS(F)                                                                  \
  KILN_FLOAT_TO_INT(F, int8_t, -128, 127)                                                      \
  KILN_FLOAT_TO_INT(F, int16_t, -32768, 32767)                                                 \
  KILN_FLOAT_TO_INT(F, int32_t, (-2147483647 - 1), 2147483647)                                 \
  KILN_FLOAT_TO_INT(F, int64_t, (-9223372036854775807L - 1), 9223372036854775807L)             \
  KILN_FLOAT_TO_INT(F, uint8_t, 0, 255)                                                        \
  KILN_FLOAT_TO_INT(F, uint16_t, 0, 65535)                                                     \
  KILN_FLOAT_TO_INT(F, uint32_t, 0, 4294967295u)                                               \
  KILN_FLOAT_TO_INT(F, uint64_t, 0, 18446744073709551615UL)
KILN_FLOAT_TO_INTS(float)
KILN_FLOAT_TO_INTS(double)
