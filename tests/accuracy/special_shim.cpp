// A C ABI over kiln's special functions for tests/accuracy/special_accuracy.py (ctypes):
// each kiln_acc_<name>_<f64|f32> evaluates one function over n points.
#include <cstddef>
#include <cstdint>

#include "kiln/runtime/special/incomplete_gamma.hpp"
#include "kiln/runtime/special/incomplete_gamma_grad.hpp"
#include "kiln/runtime/special/normal_inverse.hpp"
#include "kiln/runtime/special/incomplete_gamma_inverse.hpp"
#include "kiln/runtime/special/incomplete_beta.hpp"
#include "kiln/runtime/special/incomplete_beta_inverse.hpp"
#include "kiln/runtime/special/incomplete_beta_grad.hpp"
#include "kiln/runtime/special/bessel_ik.hpp"
#include "kiln/runtime/special/bessel_j.hpp"
#include "kiln/runtime/special/owens_t.hpp"

#define KILN_ACC_1(name)                                                                  \
  extern "C" void kiln_acc_##name##_f64(const double* x, double* out, std::size_t n) {   \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i]);               \
  }                                                                                       \
  extern "C" void kiln_acc_##name##_f32(const float* x, float* out, std::size_t n) {     \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i]);               \
  }
#define KILN_ACC_2(name)                                                                              \
  extern "C" void kiln_acc_##name##_f64(const double* x, const double* y, double* out, std::size_t n) { \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i], y[i]);                     \
  }                                                                                                   \
  extern "C" void kiln_acc_##name##_f32(const float* x, const float* y, float* out, std::size_t n) {   \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i], y[i]);                     \
  }

KILN_ACC_1(erfcinv)
KILN_ACC_1(ndtri_exp)
KILN_ACC_1(i0)
KILN_ACC_1(i1)
KILN_ACC_2(gammainc)
KILN_ACC_2(gammaincc)
KILN_ACC_2(gammainc_grad_k)
KILN_ACC_2(gammaincinv)
KILN_ACC_2(gammainccinv)
KILN_ACC_2(ive)
KILN_ACC_2(kve)
KILN_ACC_2(jv)
KILN_ACC_2(owens_t)
#define KILN_ACC_3(name)                                                                                   \
  extern "C" void kiln_acc_##name##_f64(const double* x, const double* y, const double* z, double* out,   \
                                        std::size_t n) {                                                \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i], y[i], z[i]);                  \
  }                                                                                                      \
  extern "C" void kiln_acc_##name##_f32(const float* x, const float* y, const float* z, float* out,       \
                                        std::size_t n) {                                                \
    for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::name(x[i], y[i], z[i]);                  \
  }
KILN_ACC_3(betainc)
KILN_ACC_3(betaincinv)
KILN_ACC_3(betainc_grad_a)
KILN_ACC_3(betainc_grad_b)
#include "kiln/runtime/special/polygamma.hpp"
extern "C" void kiln_acc_polygamma_f64(const double* n, const double* x, double* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = kiln_special::polygamma(static_cast<std::int64_t>(n[i]), x[i]);
}
extern "C" void kiln_acc_polygamma_f32(const float* n, const float* x, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = kiln_special::polygamma(static_cast<std::int64_t>(n[i]), x[i]);
}
#include "kiln/runtime/special/hyp2f1.hpp"
extern "C" void kiln_acc_hyp2f1_f64(const double* a, const double* b, const double* c, const double* z, double* out,
                                    std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::hyp2f1(a[i], b[i], c[i], z[i]);
}
extern "C" void kiln_acc_hyp2f1_f32(const float* a, const float* b, const float* c, const float* z, float* out,
                                    std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::hyp2f1(a[i], b[i], c[i], z[i]);
}
#include "kiln/runtime/special/hyp2f1_grad.hpp"
extern "C" void kiln_acc_hyp2f1_grad_a_f64(const double* a, const double* b, const double* c, const double* z,
                                           double* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::hyp2f1_grad_a(a[i], b[i], c[i], z[i]);
}
extern "C" void kiln_acc_hyp2f1_grad_c_f64(const double* a, const double* b, const double* c, const double* z,
                                           double* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = kiln_special::hyp2f1_grad_c(a[i], b[i], c[i], z[i]);
}
