// kiln runtime, special functions: the regularized incomplete gamma functions
// P(a, x) = gammainc and Q(a, x) = gammaincc (scipy.special's), and d/da P for their gradients.
//
// Regions (each computes directly whichever of P and Q is small there, the other as 1 minus
// it): Temme's uniform asymptotic expansion for a >= 20 and |x - a| <= 0.3 a; the power series
// of P for x <= a; Legendre's continued fraction of Q for x > a; for a < 1 and x < 1.1, Q as
// 1 - x^a / Gamma(a + 1) plus a short alternating series, which stays accurate where P is
// within an ulp of 1. The algorithms are templates on the number type: run on a Dual
// (special/dual.hpp) they give d/da along with the value.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace igam_detail {

/// d[k][n]: C_k(eta) = sum_n d[k][n] eta^n in Temme's expansion Q(a, x) = erfc(eta sqrt(a/2)) / 2
/// + exp(-a eta^2 / 2) / sqrt(2 pi a) sum_k C_k(eta) a^-k, eta^2 / 2 = x/a - 1 - log(x/a).
/// Computed exactly (rationals) from C_0 = 1/(x/a - 1) - 1/eta and
/// C_k = C_{k-1}'(eta) / eta + (-1)^k g_k / (x/a - 1), g_k Stirling's coefficients; each row
/// holds the terms that matter for |eta| <= 0.34 and a >= 20 (the rest are below 1e-19).
constexpr int kTemmeOrders = 13;
constexpr int kTemmeLength[kTemmeOrders] = {20, 19, 17, 17, 16, 15, 13, 11, 11, 10, 8, 7, 5};
constexpr double kTemme[kTemmeOrders][20] = {
    {-0.33333333333333331, 0.083333333333333329, -0.014814814814814815, 0.0011574074074074073,
     0.00035273368606701942, -0.0001787551440329218, 3.9192631785224377e-05,
     -2.185448510679992e-06, -1.85406221071516e-06, 8.2967113409530865e-07,
     -1.7665952736826078e-07, 6.7078535434014984e-09, 1.0261809784240309e-08,
     -4.3820360184533529e-09, 9.1476995822367902e-10, -2.5514193994946248e-11,
     -5.8307721325504256e-11, 2.4361948020667415e-11, -5.0276692801141755e-12,
     1.1004392031956135e-13},
    {-0.0018518518518518519, -0.003472222222222222, 0.0026455026455026454, -0.00099022633744855963,
     0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05,
     7.6491609160811098e-06, -1.6120900894563446e-06, 4.647127802807434e-09,
     1.3786334469157209e-07, -5.7525456035177047e-08, 1.1951628599778148e-08,
     -1.7543241719747647e-11, -1.0091543710600413e-09, 4.1627929918425828e-10,
     -8.5639070264929801e-11, 6.0672151016047582e-14, 7.1624989648114856e-12},
    {0.0041335978835978834, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06,
     -0.0001073665322636516, 5.2923448829120125e-05, -1.2760635188618728e-05,
     3.4235787340961378e-08, 1.3721957309062934e-06, -6.2989921383800548e-07,
     1.4280614206064242e-07, -2.0477098421990866e-10, -1.409252991086752e-08,
     6.2289740849220218e-09, -1.3670488396617114e-09, 9.428356159014678e-13, 1.2872252400089318e-10},
    {0.00064943415637860077, 0.00022947209362139917, -0.0004691894943952557,
     0.00026772063206283885, -7.5618016718839766e-05, -2.3965051138672968e-07,
     1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06,
     -2.7861080291528143e-11, -1.6958404091930278e-07, 8.0994649053880827e-08,
     -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09,
     -9.460496661855133e-10, 2.1541049775774907e-10},
    {-0.00086188829091671173, 0.00078403922172006662, -0.00029907248030319018,
     -1.4638452578843418e-06, 6.6414982154651219e-05, -3.9683650471794347e-05,
     1.1375726970678419e-05, 2.5074972262375329e-10, -1.6954149536558305e-06,
     8.9075075322053094e-07, -2.2929348340008049e-07, 2.9567941375440492e-11,
     2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09,
     -2.3024517174528067e-13},
    {-0.00033679855336635813, -6.9728137583658571e-05, 0.00027727532449593918,
     -0.00019932570516188847, 6.797780477937208e-05, 1.4190629206439671e-07,
     -1.3594048189768693e-05, 8.018470256334202e-06, -2.2914811765080952e-06,
     -3.2524735512984538e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
     4.8240967037894184e-08, -1.7989466721743514e-14, -6.3061945000135231e-09},
    {0.00053130793646399225, -0.00059216643735369393, 0.0002708782096718045,
     7.9023532326603281e-07, -8.1539693675619691e-05, 5.6116827531062497e-05,
     -1.8329116582843375e-05, -3.0796134506033047e-09, 3.4651553688036091e-06,
     -2.0291327396058603e-06, 5.7887928631490039e-07, 2.3386306738266568e-13, -8.828600746330484e-08},
    {0.00034436760689237765, 5.1717909082605919e-05, -0.00033493161081142234,
     0.00028126951547632369, -0.00010976582244684731, -1.2741009095484485e-07,
     2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06,
     4.9387589339362701e-10, -1.0595367014026043e-06},
    {-0.00065262391859530937, 0.00083949872067208726, -0.00043829709854172099,
     -6.9690914584205523e-07, 0.00016644846642067547, -0.00012783517679769218,
     4.6299532636913042e-05, 4.557909867922708e-09, -1.0595271125805195e-05,
     6.7833429048651668e-06, -2.1075476666258803e-06},
    {-0.00059676129019274626, -7.2048954160200109e-05, 0.0006782308837667328,
     -0.0006401475260262758, 0.00027750107634328704, 1.8197008380465151e-07,
     -8.4795071170685031e-05, 6.1051920825015314e-05, -2.1073920183404862e-05,
     -8.8585890141255993e-10},
    {0.0013324454494800656, -0.0019144384985654776, 0.0011089369134596636, 9.9324041226422995e-07,
     -0.00050874501293093194, 0.00042735056665392886, -0.00016858853767910798,
     -8.1301893922785004e-09},
    {0.001579727660730835, 0.00016251626278391583, -0.0020633421035543276, 0.0021389686185689098,
     -0.0010108559391263003, -3.9912705529919201e-07, 0.00036235025084764691},
    {-0.0040725121195140162, 0.0064033628338080696, -0.004041016108167662, -2.1837328028662328e-06,
     0.002174044180125464},
};

/// log1pmx(x) / x^2, smooth through x = 0 (Temme's eta needs its square root).
template <typename T>
T log1pmx_over_square(T x) {
  if (fabs(value(x)) > 0.5) return (log1p(x) - x) / (x * x);
  // log1pmx(x) = -x^2 / (2 + x) + 2 sum_{k>=1} s^(2k+1) / (2k+1) with s = x / (2 + x), and
  // s^(2k+1) / x^2 = s^(2k-1) / (2 + x)^2.
  const T r = 1.0 / (2.0 + x), s = x * r, s2 = s * s;
  T power = s, sum = s / 3.0;
  for (int k = 2; k < 40; ++k) {
    power = power * s2;
    const T add = power / double(2 * k + 1);
    sum = sum + add;
    if (fabs(value(add)) <= 1e-17 * fabs(value(sum))) break;
  }
  return 2.0 * r * r * sum - r;
}

/// x^a e^-x / Gamma(a) for a > 0, x > 0. From a = 10 up through Stirling's Gamma*, so that the
/// large, nearly cancelling a log x, x and log Gamma(a) never meet.
template <typename T>
T gamma_prefix(T a, double x) {
  const double av = value(a);
  if (av >= 10) {
    // a (log(x/a) - x/a + 1): log1pmx of x/a - 1, which loses x below a/2 (x/a - 1 -> -1).
    const T exponent = x < 0.5 * av ? a * log(x / a) + (a - x) : a * log1pmx((x - a) / a);
    return sqrt(a / (2.0 * kPi)) * exp(exponent) / gamma_star(a);
  }
  const double lx = std::log(x);
  if (std::fabs(av * lx) < 700 && x < 700) return pow(x, a) * std::exp(-x) / tgamma(a);
  return exp(a * lx - x - lgamma(a));
}

template <typename T>
struct PQ {
  T p, q;
};

/// P by its power series x^a e^-x / Gamma(a + 1) sum x^n / ((a + 1) ... (a + n)), for x <= a
/// (or small x): the terms are positive and shrink from the first.
template <typename T>
T lower_series(T a, double x) {
  T term = 1.0 + 0.0 * a, sum = term;
  for (int n = 1; n < 100000; ++n) {
    term = term * (x / (a + double(n)));
    sum = sum + term;
    if (converged(term, sum, 0.5 * kEps)) break;
  }
  return gamma_prefix(a, x) / a * sum;
}

/// Q by Legendre's continued fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)),
/// for x > a. A forward (Lentz) pass in double finds how deep the fraction must go; the value
/// is then summed backward from there, which keeps rounding errors from compounding (the
/// forward product drifts by tens of ulps where x is close to a and convergence is slow).
template <typename T>
T upper_fraction(T a, double x) {
  const double av = value(a), tiny = 1e-300;
  double b = x + 1.0 - av, c = 1.0 / tiny, d = 1.0 / b;
  int depth = 1;
  for (; depth < 100000; ++depth) {
    const double an = -depth * (depth - av);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    if (std::fabs(d * c - 1.0) <= 0.5 * kEps) break;
  }
  depth += 4 + depth / 8;  // margin, also for the derivative of a Dual
  T f = x + double(2 * depth + 1) - a;
  for (int i = depth; i >= 1; --i) f = (x + double(2 * i - 1) - a) - double(i) * (double(i) - a) / f;
  return gamma_prefix(a, x) / f;
}

/// Q for a < 1 and x < 1.1: (1 - x^a / Gamma(a + 1)) - x^a / Gamma(a + 1) a sum_{n>=1}
/// (-x)^n / (n! (a + n)), the first part by expm1 — accurate where P is within an ulp of 1.
template <typename T>
T upper_small_a(T a, double x) {
  const T log_ratio = a * std::log(x) - lgamma1p(a);  // log(x^a / Gamma(a + 1))
  double power = 1.0;                                  // (-x)^n / n!
  T sum = 0.0 * a;
  for (int n = 1; n < 200; ++n) {
    power *= -x / n;
    const T add = power / (a + double(n));
    sum = sum + add;
    if (converged(add, sum, 0.5 * kEps)) break;
  }
  return -expm1(log_ratio) - exp(log_ratio) * a * sum;
}

/// P and Q by Temme's uniform expansion, for a >= 20 and |x - a| <= 0.3 a.
template <typename T>
PQ<T> temme(T a, double x) {
  const T mu = (x - a) / a;
  const T half_square = log1pmx_over_square(mu);  // -eta^2 / (2 mu^2)
  const T eta = mu * sqrt(-2.0 * half_square);
  const T damp = exp(a * mu * mu * half_square);  // exp(-a eta^2 / 2)
  const T u = eta * sqrt(a / 2.0);
  T sum = 0.0 * a, inv_power = 1.0 + 0.0 * a;
  const T inv_a = 1.0 / a;
  for (int k = 0; k < kTemmeOrders; ++k) {
    T c = 0.0 * a;
    for (int n = kTemmeLength[k] - 1; n >= 0; --n) c = c * eta + kTemme[k][n];
    sum = sum + c * inv_power;
    inv_power = inv_power * inv_a;
    if (value(inv_power) < 1e-19) break;
  }
  const T r = sum / sqrt(2.0 * kPi * a);
  if (value(eta) >= 0) {
    const T q = damp * (0.5 * erfcx(u) + r);
    return {1.0 - q, q};
  }
  const T p = damp * (0.5 * erfcx(-u) - r);
  return {p, 1.0 - p};
}

/// P(a, x) and Q(a, x) for finite a > 0 and x > 0, each accurate relative to itself where it
/// is the smaller one.
template <typename T>
PQ<T> incomplete_gamma(T a, double x) {
  const double av = value(a);
  if (av >= 20 && std::fabs(x - av) <= 0.3 * av) return temme(a, x);
  if (av < 1 && x < 1.1) {
    const T q = upper_small_a(a, x);
    if (value(q) <= 0.5) return {1.0 - q, q};
    const T p = lower_series(a, x);
    return {p, 1.0 - p};
  }
  if (x <= av) {
    const T p = lower_series(a, x);
    return {p, 1.0 - p};
  }
  const T q = upper_fraction(a, x);
  return {1.0 - q, q};
}

/// The special values scipy gives, or false when (a, x) is an ordinary point (a > 0, x > 0,
/// both finite): NaN for NaN, negative or (a, x) = (0, 0) or (inf, inf); P = 1 at a = 0 or
/// x = inf; P = 0 at x = 0 or a = inf.
inline bool incomplete_gamma_special(double a, double x, double& p) {
  if (a != a || x != x || a < 0 || x < 0 || (a == 0 && x == 0) || (a == kInf && x == kInf)) {
    p = kNaN;
    return true;
  }
  if (a == 0 || x == kInf) {
    p = 1.0;
    return true;
  }
  if (x == 0 || a == kInf) {
    p = 0.0;
    return true;
  }
  return false;
}

}  // namespace igam_detail

/// The regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc).
inline double gammainc(double a, double x) {
  double p;
  if (igam_detail::incomplete_gamma_special(a, x, p)) return p;
  return igam_detail::incomplete_gamma(a, x).p;
}
inline float gammainc(float a, float x) { return static_cast<float>(gammainc(double(a), double(x))); }

/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
/// (scipy.special.gammaincc), accurate where it is tiny.
inline double gammaincc(double a, double x) {
  double p;
  if (igam_detail::incomplete_gamma_special(a, x, p)) return p != p ? p : 1.0 - p;
  return igam_detail::incomplete_gamma(a, x).q;
}
inline float gammaincc(float a, float x) { return static_cast<float>(gammaincc(double(a), double(x))); }

}  // namespace kiln_special
