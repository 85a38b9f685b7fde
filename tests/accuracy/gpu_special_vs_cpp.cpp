// The GPU special functions (templates/gpu/special_math.h) run on this machine's OpenCL
// platform (PoCL here) against kiln's C++ runtime (what the evaluator and the cpp backend
// compute): per function the largest and the 99th-percentile difference in ulps of the C++
// value over N random points (argument 1, default 20000), and where the largest is. Not part
// of the suite (docs/gpu_backends.md quotes a run). From the source folder:
//   g++ -std=c++17 -O1 -Iruntime/include -DKILN_SOURCE_DIR='"."' \
//       tests/accuracy/gpu_special_vs_cpp.cpp -o /tmp/gpu_special -lOpenCL && /tmp/gpu_special
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#ifndef KILN_SOURCE_DIR
#define KILN_SOURCE_DIR "."
#endif
#include <math.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include "kiln/runtime/scalar_math.hpp"
#include "kiln/runtime/special/normal_inverse.hpp"
#include "kiln/runtime/special/bessel_ik.hpp"
#include "kiln/runtime/special/bessel_j.hpp"
#include "kiln/runtime/special/incomplete_gamma_inverse.hpp"
#include "kiln/runtime/special/incomplete_beta_inverse.hpp"
#include "kiln/runtime/special/polygamma.hpp"
#include "kiln/runtime/special/owens_t.hpp"
#include "kiln/runtime/special/hyp2f1.hpp"
namespace sf = kiln_special;
static std::string slurp(const char* p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
static double ulps(double a, double b) {
  if ((a != a) && (b != b)) return 0;
  if (a == b) return 0;
  if (!std::isfinite(a) || !std::isfinite(b) || (a != a) || (b != b)) return 1e300;
  return fabs(a - b) / (fmax(fabs(b), 2.2250738585072014e-308) * 2.220446049250313e-16);
}
struct Fn { const char* name; const char* call; std::function<void(double*)> gen; std::function<double(const double*)> ref; };
int main(int argc, char** argv) {
  const int N = argc > 1 ? atoi(argv[1]) : 20000;
  std::mt19937_64 rng(7);
  auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto logu = [&](double lo, double hi) { return exp(uni(log(lo), log(hi))); };
  int ctr = 0;
  std::vector<Fn> fns = {
    {"erfcx", "kiln_erfcx_double(a)", [&](double* v) { v[0] = uni(-26, 30); }, [](const double* v) { return kiln_scalar::erfcx(v[0]); }},
    {"erfinv", "kiln_erfinv_double(a)", [&](double* v) { v[0] = uni(-1, 1); }, [](const double* v) { return kiln_scalar::erfinv(v[0]); }},
    {"erfcinv", "kiln_erfcinv_double(a)", [&](double* v) { v[0] = ++ctr % 2 ? uni(0, 2) : logu(1e-300, 1); }, [](const double* v) { return sf::erfcinv(v[0]); }},
    {"ndtri_exp", "kiln_ndtri_exp_double(a)", [&](double* v) { v[0] = -logu(1e-10, 1e5); }, [](const double* v) { return sf::ndtri_exp(v[0]); }},
    {"psi", "kiln_psi_double(a)", [&](double* v) { v[0] = uni(-50, 50); }, [](const double* v) { return kiln_scalar::psi(v[0]); }},
    {"tri_gamma", "kiln_trigamma_double(a)", [&](double* v) { v[0] = uni(-50, 50); }, [](const double* v) { return kiln_scalar::trigamma(v[0]); }},
    {"i0", "kiln_i0_double(a)", [&](double* v) { v[0] = uni(-710, 710); }, [](const double* v) { return sf::i0(v[0]); }},
    {"i1", "kiln_i1_double(a)", [&](double* v) { v[0] = uni(-710, 710); }, [](const double* v) { return sf::i1(v[0]); }},
    {"gammainc", "kiln_gammainc_double(a, b)", [&](double* v) { v[0] = logu(1e-3, 1e4); v[1] = ++ctr % 3 ? v[0] * logu(0.05, 20) : v[0] * uni(0.7, 1.3); }, [](const double* v) { return sf::gammainc(v[0], v[1]); }},
    {"gammaincc", "kiln_gammaincc_double(a, b)", [&](double* v) { v[0] = logu(1e-3, 1e4); v[1] = ++ctr % 3 ? v[0] * logu(0.05, 20) : v[0] * uni(0.7, 1.3); }, [](const double* v) { return sf::gammaincc(v[0], v[1]); }},
    {"gammaincinv", "kiln_gammaincinv_double(a, b)", [&](double* v) { v[0] = logu(1e-3, 1e4); v[1] = uni(0, 1); }, [](const double* v) { return sf::gammaincinv(v[0], v[1]); }},
    {"gammainccinv", "kiln_gammainccinv_double(a, b)", [&](double* v) { v[0] = logu(1e-3, 1e4); v[1] = uni(0, 1); }, [](const double* v) { return sf::gammainccinv(v[0], v[1]); }},
    {"ive", "kiln_ive_double(a, b)", [&](double* v) { v[0] = uni(-100, 100); v[1] = logu(1e-3, 1e3); }, [](const double* v) { return sf::ive(v[0], v[1]); }},
    {"kve", "kiln_kve_double(a, b)", [&](double* v) { v[0] = uni(-100, 100); v[1] = logu(1e-3, 1e3); }, [](const double* v) { return sf::kve(v[0], v[1]); }},
    {"jv", "kiln_jv_double(a, b)", [&](double* v) { v[0] = uni(-20, 50); v[1] = logu(1e-3, 1e3); }, [](const double* v) { return sf::jv(v[0], v[1]); }},
    {"polygamma", "kiln_polygamma_double((long)a, b)", [&](double* v) { v[0] = ++ctr % 8; v[1] = uni(-20, 20); }, [](const double* v) { return sf::polygamma((int64_t)v[0], v[1]); }},
    {"owens_t", "kiln_owens_t_double(a, b)", [&](double* v) { v[0] = uni(-10, 10); v[1] = uni(-20, 20); }, [](const double* v) { return sf::owens_t(v[0], v[1]); }},
    {"betainc", "kiln_betainc_double(a, b, c)", [&](double* v) { v[0] = logu(1e-2, 1e3); v[1] = logu(1e-2, 1e3); v[2] = uni(0, 1); }, [](const double* v) { return sf::betainc(v[0], v[1], v[2]); }},
    {"betaincinv", "kiln_betaincinv_double(a, b, c)", [&](double* v) { v[0] = logu(1e-2, 1e3); v[1] = logu(1e-2, 1e3); v[2] = uni(0, 1); }, [](const double* v) { return sf::betaincinv(v[0], v[1], v[2]); }},
    {"hyp2f1", "kiln_hyp2f1_double(a, b, c, d)", [&](double* v) { v[0] = uni(-5, 5); v[1] = uni(-5, 5); v[2] = uni(-5, 8); v[3] = uni(-3, 1); }, [](const double* v) { return sf::hyp2f1(v[0], v[1], v[2], v[3]); }},
  };
  const int F = (int)fns.size();
  std::vector<double> in(4 * F * N), out(F * N);
  for (int f = 0; f < F; ++f) for (int i = 0; i < N; ++i) fns[f].gen(&in[4 * (f * N + i)]);
  std::string kernel = "__kernel void k(__global const double* in, __global double* o, const int n) {\n"
                       " const int i = get_global_id(0); if (i >= n) return;\n";
  for (int f = 0; f < F; ++f)
    kernel += " { const int j = " + std::to_string(f) + " * n + i; const double a = in[4*j], b = in[4*j+1], c = in[4*j+2], d = in[4*j+3]; (void)b; (void)c; (void)d; o[j] = " + fns[f].call + "; }\n";
  kernel += "}\n";
  std::string src = slurp(KILN_SOURCE_DIR "/templates/gpu/prelude_opencl.h") + "#define KILN_SPECIAL_FN static inline\n" +
                    slurp(KILN_SOURCE_DIR "/templates/gpu/special_math.h") + kernel;
  cl_platform_id pl; cl_device_id dev; cl_int e;
  clGetPlatformIDs(1, &pl, nullptr);
  clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  const char* s = src.c_str();
  cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &e);
  if (clBuildProgram(p, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) {
    static char log[200000]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr); puts(log); return 1;
  }
  cl_kernel k = clCreateKernel(p, "k", &e);
  cl_mem A = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(double) * in.size(), in.data(), &e);
  cl_mem O = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(double) * out.size(), nullptr, &e);
  clSetKernelArg(k, 0, sizeof A, &A); clSetKernelArg(k, 1, sizeof O, &O); clSetKernelArg(k, 2, sizeof N, &N);
  size_t g = N;
  clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
  clEnqueueReadBuffer(q, O, CL_TRUE, 0, sizeof(double) * out.size(), out.data(), 0, nullptr, nullptr);
  for (int f = 0; f < F; ++f) {
    std::vector<double> u(N);
    double worst_at[4] = {0};
    double worst = -1;
    for (int i = 0; i < N; ++i) {
      const double* v = &in[4 * (f * N + i)];
      u[i] = ulps(out[f * N + i], fns[f].ref(v));
      if (u[i] > worst) { worst = u[i]; std::copy(v, v + 4, worst_at); }
    }
    std::sort(u.begin(), u.end());
    int same = 0; for (double x : u) same += x == 0;
    printf("%-13s max %9.3g  p99 %6.3g  identical %5.1f%%   worst at (%g, %g, %g, %g)\n", fns[f].name, u[N - 1], u[N * 99 / 100], 100.0 * same / N,
           worst_at[0], worst_at[1], worst_at[2], worst_at[3]);
  }
}
