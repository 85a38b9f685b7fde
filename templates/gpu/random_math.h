// Random variables of kiln's GPU kernels (OpenCL C and CUDA, one text): the Philox4x64-10
// counter-based generator and the samplers the RandomVariable kernels call
// (templates/gpu/random.mustache, codegen/gpu/emit_random.cpp). docs/random.md, "On the GPU",
// describes the streams; in short:
//
// - Philox4x64-10 is Random123's (Salmon et al., SC'11) with NumPy's conventions: a block is
//   the four words of `philox4x64_10(counter, key)`, in order, as
//   `numpy.random.Philox(key=k, counter=c - 1).random_raw(4)` gives them (NumPy adds one to the
//   counter before each block).
// - The key of an rng value (six uint64 words w0..w5, the PCG64 state of the CPU backend) is the
//   first two words of `philox4x64_10((w0, w1, w2, w3), (w4, w5))`.
// - Output element e (its flat C-order index) draws from its own stream: blocks
//   `philox4x64_10((b, e, 0, 0), key)` for b = 0, 1, 2, ..., their words in order. So each
//   work-item draws independently (rejection samplers loop on their own), and the draws do
//   not depend on the device's size or on the number of work-items.
// - next_rng: the rng's PCG64 state one LCG step on (state * M + inc mod 2^128, NumPy's
//   multiplier), inc kept, the buffered half-word cleared: still a valid PCG64 state.
//
// KILN_FN comes from the dialect's prelude, KILN_MULHI64 (the high word of a 64x64-bit
// product: OpenCL's mul_hi, CUDA's __umul64hi) from the dialect's mulhi64 row, defined ahead of
// this text. Parameter checks return the number (1, 2, ...) of the CPU's message they refuse
// with (the host knows the texts: codegen/gpu/emit_random.cpp), 0 when valid; a sampler is
// never called with parameters its check refuses. Every rejection loop gives up after
// KILN_RV_TRIES rounds (NaN, or 0 for integers): with valid parameters each round accepts with
// probability well above 1/2, so that bound is never reached; it keeps a kernel from spinning
// on parameters no check refuses and no sampler can use (a NaN shape).

#define KILN_RV_TRIES 10000
#define KILN_RV_PI 3.14159265358979323846

// --- Philox4x64-10 ---------------------------------------------------------------------------

typedef struct {
  uint64_t v0, v1, v2, v3;
} kiln_philox4;

// Random123's philox4x64_10: ten rounds, the key bumped by the Weyl constants between rounds.
KILN_FN kiln_philox4 kiln_philox4x64_10(kiln_philox4 c, uint64_t k0, uint64_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += (uint64_t)0x9E3779B97F4A7C15UL;
      k1 += (uint64_t)0xBB67AE8584CAA73BUL;
    }
    const uint64_t m0 = (uint64_t)0xD2E7470EE14C6C93UL, m1 = (uint64_t)0xCA5A826395121157UL;
    const uint64_t hi0 = KILN_MULHI64(m0, c.v0), lo0 = m0 * c.v0;
    const uint64_t hi1 = KILN_MULHI64(m1, c.v2), lo1 = m1 * c.v2;
    kiln_philox4 n;
    n.v0 = hi1 ^ c.v1 ^ k0;
    n.v1 = lo1;
    n.v2 = hi0 ^ c.v3 ^ k1;
    n.v3 = lo0;
    c = n;
  }
  return c;
}

// One output element's stream: key, element index, the next block's number, the words of the
// current block not used yet (b0 first), and Box-Muller's second normal.
typedef struct {
  uint64_t k0, k1, element, block;
  uint64_t b0, b1, b2, b3;
  int left;
  int has_normal;
  double normal;
} kiln_philox;

// The stream of output element `element` under key (k0, k1).
KILN_FN kiln_philox kiln_philox_stream(const uint64_t k0, const uint64_t k1, const uint64_t element) {
  kiln_philox s;
  s.k0 = k0;
  s.k1 = k1;
  s.element = element;
  s.block = 0;
  s.b0 = s.b1 = s.b2 = s.b3 = 0;
  s.left = 0;
  s.has_normal = 0;
  s.normal = 0.0;
  return s;
}

// The stream's next 64-bit word.
KILN_FN uint64_t kiln_philox_next(kiln_philox* s) {
  if (s->left == 0) {
    kiln_philox4 c;
    c.v0 = s->block;
    c.v1 = s->element;
    c.v2 = 0;
    c.v3 = 0;
    const kiln_philox4 w = kiln_philox4x64_10(c, s->k0, s->k1);
    s->b0 = w.v0;
    s->b1 = w.v1;
    s->b2 = w.v2;
    s->b3 = w.v3;
    s->left = 4;
    s->block += 1;
  }
  const uint64_t out = s->b0;
  s->b0 = s->b1;
  s->b1 = s->b2;
  s->b2 = s->b3;
  s->left -= 1;
  return out;
}

// A double in [0, 1) from the top 53 bits (NumPy's next_double).
KILN_FN double kiln_philox_u01(kiln_philox* s) {
  return (double)(kiln_philox_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

// A double in (0, 1), never 0 nor 1: (top 52 bits + 1/2) / 2^52.
KILN_FN double kiln_philox_open01(kiln_philox* s) {
  return ((double)(kiln_philox_next(s) >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

// The key of an rng value's six words.
KILN_FN kiln_philox4 kiln_philox_key(const uint64_t w0, const uint64_t w1, const uint64_t w2, const uint64_t w3,
                                     const uint64_t w4, const uint64_t w5) {
  kiln_philox4 c;
  c.v0 = w0;
  c.v1 = w1;
  c.v2 = w2;
  c.v3 = w3;
  return kiln_philox4x64_10(c, w4, w5);
}

// next_rng's state words (w0 the high word): state * M + inc modulo 2^128, NumPy's PCG64
// multiplier M = 2549297995355413924 * 2^64 + 4865540595714422341.
KILN_FN void kiln_rv_next_state(const uint64_t hi, const uint64_t lo, const uint64_t inc_hi, const uint64_t inc_lo,
                                uint64_t* out_hi, uint64_t* out_lo) {
  const uint64_t m_hi = (uint64_t)2549297995355413924UL, m_lo = (uint64_t)4865540595714422341UL;
  const uint64_t p_lo = lo * m_lo;
  const uint64_t p_hi = KILN_MULHI64(lo, m_lo) + lo * m_hi + hi * m_lo;
  const uint64_t s_lo = p_lo + inc_lo;
  *out_hi = p_hi + inc_hi + (s_lo < p_lo ? (uint64_t)1 : (uint64_t)0);
  *out_lo = s_lo;
}

// --- draws from the stream -------------------------------------------------------------------

KILN_FN double kiln_rv_nan(void) { return KILN_INF - KILN_INF; }

// A standard normal: Box-Muller over two uniforms, the second normal kept for the next call.
KILN_FN double kiln_rv_std_normal(kiln_philox* s) {
  if (s->has_normal) {
    s->has_normal = 0;
    return s->normal;
  }
  const double u1 = kiln_philox_open01(s), u2 = kiln_philox_u01(s);
  const double r = sqrt(-2.0 * log(u1)), t = 2.0 * KILN_RV_PI * u2;
  s->normal = r * sin(t);
  s->has_normal = 1;
  return r * cos(t);
}

// A standard exponential: -log(U), U in (0, 1).
KILN_FN double kiln_rv_std_exponential(kiln_philox* s) { return -log(kiln_philox_open01(s)); }

// A standard gamma of shape k (scale 1): Marsaglia and Tsang's squeeze and rejection for k >= 1;
// for k < 1 a gamma of shape k + 1 times U^(1/k); 0 for k = 0 (NumPy's rule).
KILN_FN double kiln_rv_std_gamma(kiln_philox* s, const double shape) {
  if (shape == 0.0) return 0.0;
  if (!(shape > 0.0)) return kiln_rv_nan();
  if (isinf(shape)) return shape;
  const double k = shape < 1.0 ? shape + 1.0 : shape;
  const double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  double g = kiln_rv_nan();
  for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
    const double x = kiln_rv_std_normal(s);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = kiln_philox_open01(s);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x) || log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) {
      g = d * v;
      break;
    }
  }
  if (shape < 1.0) g = g * pow(kiln_philox_open01(s), 1.0 / shape);
  return g;
}

// log of a standard gamma of shape k, accurate for small k where the gamma itself underflows:
// log G(k + 1) + log(U) / k for k < 1.
KILN_FN double kiln_rv_log_std_gamma(kiln_philox* s, const double shape) {
  if (shape >= 1.0 || !(shape > 0.0)) return log(kiln_rv_std_gamma(s, shape));
  const double g = kiln_rv_std_gamma(s, shape + 1.0);
  return log(g) + log(kiln_philox_open01(s)) / shape;
}

// Poisson(lam): multiplication of uniforms below 10, Hormann's PTRS (transformed rejection with
// squeeze) from 10 on.
KILN_FN int64_t kiln_rv_poisson_draw(kiln_philox* s, const double lam) {
  if (!(lam > 0.0)) return 0;
  if (lam < 10.0) {
    const double limit = exp(-lam);
    double prod = 1.0;
    int64_t x = 0;
    for (;;) {
      prod *= kiln_philox_u01(s);
      if (prod <= limit) return x;
      ++x;
    }
  }
  const double slam = sqrt(lam), loglam = log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
    const double u = kiln_philox_u01(s) - 0.5, v = kiln_philox_u01(s);
    const double us = 0.5 - fabs(u);
    const double kd = floor((2.0 * a / us + b) * u + lam + 0.43);
    if (!(kd >= 0.0) || kd >= 9.2233720368547758e18) continue;
    if (us >= 0.07 && v <= vr) return (int64_t)kd;
    if (us < 0.013 && v > us) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + kd * loglam - lgamma(kd + 1.0)) return (int64_t)kd;
  }
  return 0;
}

// Binomial(n, p) for p <= 1/2: inversion while n p <= 30 (the CDF walked from 0), else
// Hormann's BTRS (transformed rejection with squeeze), the acceptance test on
// log f(k) / f(m) through lgamma.
KILN_FN int64_t kiln_rv_binomial_half(kiln_philox* s, const int64_t n, const double p) {
  if (n == 0 || p == 0.0) return 0;
  const double q = 1.0 - p, nd = (double)n;
  if (nd * p <= 30.0) {
    const double qn = exp(nd * log1p(-p)), np = nd * p;
    const double bound = fmin(nd, np + 10.0 * sqrt(np * q + 1.0));
    for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
      double u = kiln_philox_u01(s), px = qn;
      int64_t x = 0;
      while (u > px) {
        ++x;
        if ((double)x > bound) break;
        u -= px;
        px = ((nd - (double)x + 1.0) * p * px) / ((double)x * q);
      }
      if ((double)x <= bound) return x;
    }
    return 0;
  }
  const double spq = sqrt(nd * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = nd * p + 0.5;
  const double alpha = (2.83 + 5.1 / b) * spq, vr = 0.92 - 4.2 / b;
  const double lpq = log(p / q), m = floor((nd + 1.0) * p);
  const double h = lgamma(m + 1.0) + lgamma(nd - m + 1.0);
  for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
    const double u = kiln_philox_u01(s) - 0.5;
    double v = kiln_philox_u01(s);
    const double us = 0.5 - fabs(u);
    const double k = floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > nd) continue;
    if (us >= 0.07 && v <= vr) return (int64_t)k;
    v = log(v * alpha / (a / (us * us) + b));
    if (v <= h - lgamma(k + 1.0) - lgamma(nd - k + 1.0) + (k - m) * lpq) return (int64_t)k;
  }
  return 0;
}

KILN_FN int64_t kiln_rv_binomial_draw(kiln_philox* s, const int64_t n, const double p) {
  if (p > 0.5) return n - kiln_rv_binomial_half(s, n, 1.0 - p);
  return kiln_rv_binomial_half(s, n, p);
}

// Beta(a, b) as X / (X + Y) of two gammas, computed from their logarithms (no underflow for
// small shapes).
KILN_FN double kiln_rv_beta_draw(kiln_philox* s, const double a, const double b) {
  const double lx = kiln_rv_log_std_gamma(s, a), ly = kiln_rv_log_std_gamma(s, b);
  if (isnan(lx) || isnan(ly)) return kiln_rv_nan();
  if (lx == ly) return 0.5;  // both infinite in the same direction, or equal
  return 1.0 / (1.0 + exp(ly - lx));
}

// --- the RandomVariables: <name>_check (0 or the message's number) and <name> (one draw) -----
// The message numbers follow runtime/include/kiln/runtime/random/variables.hpp's checks, in
// their order (codegen/gpu/emit_random.cpp lists the texts).

// NumPy's CONS_NON_NEGATIVE: the sign bit set on a non-NaN (-0.0 too).
KILN_FN int kiln_rv_negative(const double v) { return !isnan(v) && signbit(v); }

KILN_FN int kiln_rv_uniform_check(const double low, const double high) {
  const double range = high - low;
  if (!isfinite(range)) return 1;
  if (kiln_rv_negative(range)) return 2;
  return 0;
}
KILN_FN double kiln_rv_uniform(kiln_philox* s, const double low, const double high) {
  return low + (high - low) * kiln_philox_u01(s);
}

KILN_FN int kiln_rv_triangular_check(const double left, const double mode, const double right) {
  if (left > mode) return 1;
  if (mode > right) return 2;
  if (left == right) return 3;
  return 0;
}
KILN_FN double kiln_rv_triangular(kiln_philox* s, const double left, const double mode, const double right) {
  const double base = right - left, leftbase = mode - left, ratio = leftbase / base;
  const double u = kiln_philox_u01(s);
  if (u <= ratio) return left + sqrt(u * leftbase * base);
  return right - sqrt((1.0 - u) * (right - mode) * base);
}

KILN_FN int kiln_rv_beta_check(const double a, const double b) {
  if (a <= 0) return 1;
  if (b <= 0) return 2;
  return 0;
}
KILN_FN double kiln_rv_beta(kiln_philox* s, const double a, const double b) { return kiln_rv_beta_draw(s, a, b); }

KILN_FN int kiln_rv_normal_check(const double loc, const double scale) {
  (void)loc;
  return kiln_rv_negative(scale) ? 1 : 0;
}
KILN_FN double kiln_rv_normal(kiln_philox* s, const double loc, const double scale) {
  return loc + scale * kiln_rv_std_normal(s);
}

KILN_FN int kiln_rv_lognormal_check(const double mean, const double sigma) {
  (void)mean;
  return kiln_rv_negative(sigma) ? 1 : 0;
}
KILN_FN double kiln_rv_lognormal(kiln_philox* s, const double mean, const double sigma) {
  return exp(mean + sigma * kiln_rv_std_normal(s));
}

KILN_FN int kiln_rv_gamma_check(const double shape, const double scale) {
  if (kiln_rv_negative(shape)) return 1;
  if (kiln_rv_negative(scale)) return 2;
  return 0;
}
KILN_FN double kiln_rv_gamma(kiln_philox* s, const double shape, const double scale) {
  return kiln_rv_std_gamma(s, shape) * scale;
}

KILN_FN int kiln_rv_exponential_check(const double scale) { return kiln_rv_negative(scale) ? 1 : 0; }
KILN_FN double kiln_rv_exponential(kiln_philox* s, const double scale) { return scale * kiln_rv_std_exponential(s); }

KILN_FN int kiln_rv_weibull_check(const double a) { return kiln_rv_negative(a) ? 1 : 0; }
KILN_FN double kiln_rv_weibull(kiln_philox* s, const double a) {
  if (a == 0.0) return 0.0;
  return pow(kiln_rv_std_exponential(s), 1.0 / a);
}

KILN_FN int kiln_rv_logistic_check(const double loc, const double scale) {
  (void)loc;
  return kiln_rv_negative(scale) ? 1 : 0;
}
KILN_FN double kiln_rv_logistic(kiln_philox* s, const double loc, const double scale) {
  const double u = kiln_philox_open01(s);
  return loc + scale * log(u / (1.0 - u));
}

KILN_FN int kiln_rv_vonmises_check(const double mu, const double kappa) {
  (void)mu;
  return kiln_rv_negative(kappa) ? 1 : 0;
}
// Best and Fisher's rejection (NumPy's steps: a uniform angle below kappa 1e-8, a wrapped
// normal above 1e6), the result wrapped to [-pi, pi].
KILN_FN double kiln_rv_vonmises(kiln_philox* s, const double mu, const double kappa) {
  if (isnan(kappa)) return kiln_rv_nan();
  if (kappa < 1e-8) return KILN_RV_PI * (2.0 * kiln_philox_u01(s) - 1.0);
  double result;
  if (kappa > 1e6) {
    result = mu + sqrt(1.0 / kappa) * kiln_rv_std_normal(s);
  } else {
    double sv;
    if (kappa < 1e-5) {
      sv = 1.0 / kappa + kappa;
    } else {
      const double r = 1.0 + sqrt(1.0 + 4.0 * kappa * kappa);
      const double rho = (r - sqrt(2.0 * r)) / (2.0 * kappa);
      sv = (1.0 + rho * rho) / (2.0 * rho);
    }
    double w = 0.0;
    for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
      const double u = kiln_philox_u01(s);
      const double z = cos(KILN_RV_PI * u);
      w = (1.0 + sv * z) / (sv + z);
      const double y = kappa * (sv - w);
      const double v = kiln_philox_open01(s);
      if (y * (2.0 - y) - v >= 0.0 || log(y / v) + 1.0 - y >= 0.0) break;
    }
    result = acos(fmin(fmax(w, -1.0), 1.0));
    if (kiln_philox_u01(s) < 0.5) result = -result;
    result += mu;
  }
  const int neg = result < 0.0;
  double mod = fmod(fabs(result) + KILN_RV_PI, 2.0 * KILN_RV_PI) - KILN_RV_PI;
  return neg ? -mod : mod;
}

KILN_FN int kiln_rv_invgamma_check(const double shape, const double scale) {
  if (kiln_rv_negative(shape)) return 1;
  if (kiln_rv_negative(scale)) return 2;  // the sign of 1 / scale
  return 0;
}
KILN_FN double kiln_rv_invgamma(kiln_philox* s, const double shape, const double scale) {
  return 1.0 / (kiln_rv_std_gamma(s, shape) * (1.0 / scale));
}

KILN_FN int kiln_rv_wald_check(const double mean, const double scale) {
  if (mean <= 0) return 1;
  if (scale <= 0) return 2;
  return 0;
}
// Michael, Schucany and Haas's transformation (NumPy's formula).
KILN_FN double kiln_rv_wald(kiln_philox* s, const double mean, const double scale) {
  const double mu_2l = mean / (2.0 * scale);
  double y = kiln_rv_std_normal(s);
  y = mean * y * y;
  const double x = mean + mu_2l * (y - sqrt(4.0 * scale * y + y * y));
  if (kiln_philox_u01(s) <= mean / (mean + x)) return x;
  return mean * mean / x;
}

KILN_FN int kiln_rv_laplace_check(const double loc, const double scale) {
  (void)loc;
  return kiln_rv_negative(scale) ? 1 : 0;
}
KILN_FN double kiln_rv_laplace(kiln_philox* s, const double loc, const double scale) {
  const double u = kiln_philox_open01(s);
  if (u >= 0.5) return loc - scale * log(2.0 - u - u);
  return loc + scale * log(u + u);
}

// NumPy's POISSON_LAM_MAX.
#define KILN_RV_POISSON_LAM_MAX 9.223372006484771e+18

KILN_FN int kiln_rv_poisson_check(const double lam) {
  if (!(lam <= KILN_RV_POISSON_LAM_MAX)) return 1;
  if (!(lam >= 0)) return 2;
  return 0;
}
KILN_FN int64_t kiln_rv_poisson(kiln_philox* s, const double lam) { return kiln_rv_poisson_draw(s, lam); }

KILN_FN int kiln_rv_geometric_check(const double p) { return !(p > 0 && p <= 1) ? 1 : 0; }
// Inversion: ceil(log(U) / log(1 - p)), at least 1.
KILN_FN int64_t kiln_rv_geometric(kiln_philox* s, const double p) {
  if (p >= 1.0) return 1;
  const double x = ceil(log(kiln_philox_open01(s)) / log1p(-p));
  if (!(x >= 1.0)) return 1;
  if (x >= 9.2233720368547758e18) return (int64_t)0x7fffffffffffffffL;
  return (int64_t)x;
}

KILN_FN int kiln_rv_binomial_check(const int64_t n, const double p) {
  if (n < 0) return 1;
  if (!(p >= 0 && p <= 1)) return 2;
  return 0;
}
KILN_FN int64_t kiln_rv_binomial(kiln_philox* s, const int64_t n, const double p) {
  return kiln_rv_binomial_draw(s, n, p);
}

KILN_FN int kiln_rv_integers_check(const int64_t low, const int64_t high) { return low >= high ? 1 : 0; }
// Lemire's multiply-and-reject over the range high - low (1 to 2^64 - 1).
KILN_FN int64_t kiln_rv_integers(kiln_philox* s, const int64_t low, const int64_t high) {
  const uint64_t range = (uint64_t)high - (uint64_t)low;
  uint64_t w = kiln_philox_next(s);
  uint64_t lo = w * range;
  if (lo < range) {
    const uint64_t t = ((uint64_t)0 - range) % range;
    while (lo < t) {
      w = kiln_philox_next(s);
      lo = w * range;
    }
  }
  return (int64_t)((uint64_t)low + KILN_MULHI64(w, range));
}

KILN_FN int kiln_rv_hypergeometric_check(const int64_t good, const int64_t bad, const int64_t sample) {
  if (good < 0) return 1;
  if (sample < 0) return 2;
  if (good + bad < sample) return 3;  // NumPy's order of checks
  if (bad < 0) return 4;
  if (good >= 1000000000 || bad >= 1000000000) return 5;
  return 0;
}
// log of C(n, k).
KILN_FN double kiln_rv_log_choose(const double n, const double k) {
  return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}
// Inversion from the mode outward (a chop-down search): the probability of the mode from
// lgamma, its neighbours by the ratio p(k + 1) / p(k) = (good - k)(sample - k) /
// ((k + 1)(bad - sample + k + 1)), taken alternately above and below until U is used up —
// about a standard deviation of steps on average. If the rounding of the probabilities leaves
// U over when the support is exhausted, U is drawn again.
KILN_FN int64_t kiln_rv_hypergeometric(kiln_philox* s, const int64_t good, const int64_t bad, const int64_t sample) {
  const double g = (double)good, b = (double)bad, n = (double)sample, total = g + b;
  const double lo = fmax(0.0, n - b), hi = fmin(n, g);
  if (lo == hi) return (int64_t)lo;
  double mode = floor((n + 1.0) * (g + 1.0) / (total + 2.0));
  mode = fmin(fmax(mode, lo), hi);
  const double pmode = exp(kiln_rv_log_choose(g, mode) + kiln_rv_log_choose(b, n - mode) - kiln_rv_log_choose(total, n));
  for (int tries = 0; tries < KILN_RV_TRIES; ++tries) {
    double u = kiln_philox_u01(s) - pmode;
    if (u < 0.0) return (int64_t)mode;
    double up = mode, pup = pmode, down = mode, pdown = pmode;
    while (up < hi || down > lo) {
      if (up < hi) {
        pup *= (g - up) * (n - up) / ((up + 1.0) * (b - n + up + 1.0));
        up += 1.0;
        u -= pup;
        if (u < 0.0) return (int64_t)up;
      }
      if (down > lo) {
        pdown *= down * (b - n + down) / ((g - down + 1.0) * (n - down + 1.0));
        down -= 1.0;
        u -= pdown;
        if (u < 0.0) return (int64_t)down;
      }
    }
  }
  return (int64_t)mode;
}

// SciPy's "Domain error in arguments" (message 1 of each of these).

KILN_FN int kiln_rv_halfnormal_check(const double loc, const double scale) {
  (void)loc;
  return !(scale >= 0) ? 1 : 0;
}
KILN_FN double kiln_rv_halfnormal(kiln_philox* s, const double loc, const double scale) {
  return fabs(kiln_rv_std_normal(s)) * scale + loc;
}

KILN_FN int kiln_rv_t_check(const double df, const double loc, const double scale) {
  (void)loc;
  return !(df > 0) || !(scale >= 0) ? 1 : 0;
}
// A normal over the square root of a gamma of shape df / 2 (NumPy's standard_t).
KILN_FN double kiln_rv_t(kiln_philox* s, const double df, const double loc, const double scale) {
  const double num = kiln_rv_std_normal(s);
  const double denom = kiln_rv_std_gamma(s, df / 2.0);
  return sqrt(df / 2.0) * num / sqrt(denom) * scale + loc;
}

KILN_FN int kiln_rv_gumbel_check(const double loc, const double scale) {
  (void)loc;
  return !(scale >= 0) ? 1 : 0;
}
KILN_FN double kiln_rv_gumbel(kiln_philox* s, const double loc, const double scale) {
  return -log(-log(kiln_philox_open01(s))) * scale + loc;
}

KILN_FN int kiln_rv_halfcauchy_check(const double loc, const double scale) {
  (void)loc;
  return !(scale >= 0) ? 1 : 0;
}
KILN_FN double kiln_rv_halfcauchy(kiln_philox* s, const double loc, const double scale) {
  return tan(KILN_RV_PI / 2.0 * kiln_philox_u01(s)) * scale + loc;
}

KILN_FN int kiln_rv_pareto_check(const double b, const double scale) { return !(b > 0) || !(scale >= 0) ? 1 : 0; }
// (1 - U)^(-1 / b) * scale; -1 / b in float32 for a float32 b (SciPy's ufunc sees it alone).
KILN_FN double kiln_rv_pareto(kiln_philox* s, const double b, const double scale, const int single_b) {
  const double e = single_b ? (double)(-1.0f / (float)b) : -1.0 / b;
  return pow(1.0 - kiln_philox_u01(s), e) * scale + 0.0;
}

KILN_FN int kiln_rv_truncexpon_check(const double b, const double loc, const double scale) {
  (void)loc;
  return !(b > 0) || !(scale >= 0) ? 1 : 0;
}
// -log1p(U * expm1(-b)) * scale + loc; expm1 in float32 for a float32 b.
KILN_FN double kiln_rv_truncexpon(kiln_philox* s, const double b, const double loc, const double scale, const int single_b) {
  const double m = single_b ? (double)expm1(-(float)b) : expm1(-b);
  return -log1p(kiln_philox_u01(s) * m) * scale + loc;
}

KILN_FN int kiln_rv_bernoulli_check(const double p) { return !(p >= 0 && p <= 1) ? 1 : 0; }
KILN_FN int64_t kiln_rv_bernoulli(kiln_philox* s, const double p) { return kiln_philox_u01(s) < p ? 1 : 0; }

KILN_FN int kiln_rv_negative_binomial_check(const double n, const double p) {
  if (!(n > 0) || !(p > 0) || !(p <= 1)) return 1;
  if ((1 - p) / p * (n + 10 * sqrt(n)) > KILN_RV_POISSON_LAM_MAX) return 2;
  return 0;
}
// A Poisson of a gamma rate (NumPy's negative_binomial).
KILN_FN int64_t kiln_rv_negative_binomial(kiln_philox* s, const double n, const double p) {
  const double y = kiln_rv_std_gamma(s, n) * ((1.0 - p) / p);
  return kiln_rv_poisson_draw(s, y);
}

KILN_FN int kiln_rv_cauchy_check(const double loc, const double scale) {
  (void)loc;
  return !(scale >= 0) ? 1 : 0;
}
KILN_FN double kiln_rv_cauchy(kiln_philox* s, const double loc, const double scale) {
  return tan(KILN_RV_PI * (kiln_philox_open01(s) - 0.5)) * scale + loc;
}

// PyTensor's GenGammaRV(alpha, p, lambd) = scipy.stats.gengamma(alpha / p, p, scale=lambd); the
// quotients in float32 where NumPy's ufuncs see float32 alone.
KILN_FN double kiln_rv_gengamma_shape(const double alpha, const double p, const int single_alpha, const int single_p) {
  return single_alpha && single_p ? (double)((float)alpha / (float)p) : alpha / p;
}
KILN_FN int kiln_rv_gengamma_check(const double alpha, const double p, const double lambd, const int single_alpha,
                                   const int single_p) {
  return !(kiln_rv_gengamma_shape(alpha, p, single_alpha, single_p) > 0) || !(p != 0) || !(lambd >= 0) ? 1 : 0;
}
KILN_FN double kiln_rv_gengamma(kiln_philox* s, const double alpha, const double p, const double lambd,
                                const int single_alpha, const int single_p) {
  const double power = single_p ? (double)(1.0f / (float)p) : 1.0 / p;
  return pow(kiln_rv_std_gamma(s, kiln_rv_gengamma_shape(alpha, p, single_alpha, single_p)), power) * lambd + 0.0;
}

KILN_FN int kiln_rv_beta_binomial_check(const int64_t n, const double a, const double b) {
  return n < 0 || !(a > 0) || !(b > 0) ? 1 : 0;
}
KILN_FN int64_t kiln_rv_beta_binomial(kiln_philox* s, const int64_t n, const double a, const double b) {
  return kiln_rv_binomial_draw(s, n, kiln_rv_beta_draw(s, a, b));
}
