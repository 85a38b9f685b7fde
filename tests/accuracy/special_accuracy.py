#!/usr/bin/env python3
"""Accuracy of kiln's special functions (runtime/include/kiln/runtime/special/) and of SciPy's,
against mpmath at 40+ digits, in ulps of the correctly rounded result.

    python3 -m venv build/venv && build/venv/bin/pip install scipy mpmath
    build/venv/bin/python tests/accuracy/special_accuracy.py [--quick] [function ...]

Compiles special_shim.cpp (a C ABI over the headers) with c++ -O2, evaluates each function on
a dense random sample of its usual domain and on a set of hard points (tails, huge and tiny
arguments, branch boundaries), in float64 and float32 (float32 on the float32-rounded inputs,
against the reference rounded to float32), and prints one table row per function. jv is
measured in ulps of max(|J|, min(1, sqrt(2 / (pi x)))) — relative accuracy near its zeros is
meaningless. Not part of the test suite (it needs SciPy and mpmath and takes minutes); the
numbers it printed are in docs/special_functions.md.
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import warnings

import mpmath as mp
import numpy as np
import scipy
import scipy.special as sc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mpref  # noqa: E402

warnings.simplefilter("ignore")
mp.mp.dps = 40


def build_shim():
    out = os.path.join(tempfile.mkdtemp(), "special_shim.so")
    subprocess.run(["c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-I", os.path.join(ROOT, "runtime", "include"),
                    os.path.join(HERE, "special_shim.cpp"), "-o", out], check=True)
    return ctypes.CDLL(out)


LIB = None


def kiln(name, args, dtype):
    ctype = ctypes.c_double if dtype == np.float64 else ctypes.c_float
    p = ctypes.POINTER(ctype)
    arrs = [np.ascontiguousarray(a, dtype=dtype) for a in args]
    out = np.empty_like(arrs[0])
    suffix = "f64" if dtype == np.float64 else "f32"
    getattr(LIB, f"kiln_acc_{name}_{suffix}")(*[a.ctypes.data_as(p) for a in arrs], out.ctypes.data_as(p),
                                               ctypes.c_size_t(out.size))
    return out


# --- references -------------------------------------------------------------------------------

def _log_erfc(t):
    if t > 1e4:
        s, term = mp.mpf(1), mp.mpf(1)
        for n in range(1, 12):
            term *= -(2 * n - 1) / (2 * t * t)
            s += term
        return -t * t - mp.log(t * mp.sqrt(mp.pi)) + mp.log(s)
    return mp.log(mp.erfc(t))


def _erfc_inverse_log(ly):
    """t >= 0 with log erfc(t) = ly, by Newton in mpmath."""
    big = -ly - mp.log(mp.sqrt(mp.pi))
    t = mp.sqrt(max(big, mp.mpf(1)))
    t = mp.sqrt(max(big - mp.log(t), mp.mpf(0.25)))
    for _ in range(200):
        f = _log_erfc(t) - ly
        step = f / (-2 / mp.sqrt(mp.pi) * mp.exp(-t * t - _log_erfc(t)))
        t -= step
        if abs(step) < abs(t) * mp.mpf(10) ** -45:
            break
    return t


def ref_erfcinv(y):
    y = mp.mpf(y)
    if y > 1:
        return -ref_erfcinv(2 - y)
    if y > 1e-10:
        return mp.erfinv(1 - y)
    return _erfc_inverse_log(mp.log(y))


def ref_ndtri_exp(v):
    v = mp.mpf(v)
    if v > -mp.log(2):
        return mp.sqrt(2) * _erfc_inverse_log(mp.log(-2 * mp.expm1(v)))
    return -mp.sqrt(2) * _erfc_inverse_log(v + mp.log(2))


def ref_owens_t(h, a):
    h, a = mp.mpf(h), mp.mpf(a)
    sign = -1 if a < 0 else 1
    a, h = abs(a), abs(h)
    if a > 1:
        q = lambda t: mp.erfc(t / mp.sqrt(2)) / 2
        return sign * ((1 - q(h)) * q(a * h) / 2 + (1 - q(a * h)) * q(h) / 2 - ref_owens_t(a * h, 1 / a))
    if h == 0:
        return sign * mp.atan(a) / (2 * mp.pi)
    # u = h x: exp(-h^2/2) / h int_0^(ah) exp(-u^2/2) / (1 + u^2/h^2) du, split where the
    # Gaussian falls (tanh-sinh quadrature of the unscaled integrand misses digits for large h).
    g = lambda u: mp.exp(-u * u / 2) / (1 + u * u / (h * h))
    pts = [mp.mpf(0)] + [c for c in (0.5, 1, 2, 3, 4, 6, 8, 12, 16, 24) if c < a * h] + [a * h]
    return sign * mp.exp(-h * h / 2) / h * mp.quad(g, pts) / (2 * mp.pi)


def _bessel_large(nu, x, sign):
    s, t = mp.mpf(0), mp.mpf(1)
    for k in range(40):
        if k:
            t *= (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * x)
        s += t * (1 if sign < 0 else (-1) ** k)
    return s / mp.sqrt(2 * mp.pi * x) if sign > 0 else s * mp.sqrt(mp.pi / (2 * x))


def ref_ive(v, x):
    v, x = mp.mpf(v), mp.mpf(x)
    if x > 1e8 and x > 100 * v * v:
        return _bessel_large(v, x, +1)
    return mp.besseli(v, x) * mp.exp(-abs(x))


def ref_kve(v, x):
    v, x = mp.mpf(v), mp.mpf(x)
    if x > 1e8 and x > 100 * v * v:
        return _bessel_large(v, x, -1)
    v = abs(v)
    if v > 30:
        # mpmath's besselk goes wrong for large orders (even its sign): the integral
        # e^x K_v(x) = int_0^inf exp(-x (cosh t - 1)) cosh(v t) dt, split around its peak.
        peak = mp.asinh(v / x)
        f = lambda t: mp.exp(-x * (mp.cosh(t) - 1)) * mp.cosh(v * t)
        return mp.quad(f, [0, peak / 2, peak, 1.5 * peak, 2 * peak, 4 * peak + 1, mp.inf])
    return mp.besselk(v, x) * mp.exp(x)


REF = {
    "erfcinv": ref_erfcinv,
    "ndtri_exp": ref_ndtri_exp,
    "i0": lambda x: mp.besseli(0, mp.mpf(x)),
    "i1": lambda x: mp.besseli(1, mp.mpf(x)),
    "gammainc": lambda a, x: mpref.gamma_pq(a, x)[0],
    "gammaincc": lambda a, x: mpref.gamma_pq(a, x)[1],
    "gammaincinv": lambda a, p: mpref.gamma_inv(a, p, True),
    "gammainccinv": lambda a, q: mpref.gamma_inv(a, q, False),
    "ive": ref_ive,
    "kve": ref_kve,
    "jv": lambda v, x: mp.besselj(mp.mpf(v), mp.mpf(x)),
    "owens_t": ref_owens_t,
    "polygamma": lambda n, x: mp.polygamma(int(n), mp.mpf(x)),
    "betainc": lambda a, b, x: mpref.beta_pq(a, b, x)[0],
    "betaincinv": lambda a, b, y: mpref.beta_inv(a, b, y),
    "hyp2f1": lambda a, b, c, z: mp.hyp2f1(mp.mpf(a), mp.mpf(b), mp.mpf(c), mp.mpf(z)),
}


def scipy_fn(name):
    if name == "polygamma":
        return lambda n, x: sc.polygamma(np.asarray(n).astype(np.int64), x)
    return getattr(sc, name)


# --- samples: (dense, hard), each a list of argument arrays -----------------------------------

def lu(r, lo, hi, n):
    return np.exp(r.uniform(np.log(lo), np.log(hi), n))


def samples(name, r, n):
    if name == "erfcinv":
        return [r.uniform(0, 2, n)], [np.concatenate([10 ** r.uniform(-320, -1, n // 4), 2 - 10 ** r.uniform(-16, -1, n // 4)])]
    if name == "ndtri_exp":
        return [-lu(r, 1e-3, 50, n)], [-10 ** r.uniform(-300, 300, n // 2)]
    if name in ("i0", "i1"):
        return [r.uniform(-30, 30, n)], [r.uniform(-713, 713, n // 4)]
    if name in ("gammainc", "gammaincc"):
        a = lu(r, 0.1, 30, n)
        ah = lu(r, 1e-3, 1e4, n // 2)
        return [a, a * np.exp(r.uniform(-1, 1, n))], [ah, ah * np.exp(r.uniform(-1.5, 1.5, n // 2))]
    if name in ("gammaincinv", "gammainccinv"):
        return [lu(r, 0.1, 30, n // 3), r.uniform(0.01, 0.99, n // 3)], \
               [lu(r, 1e-2, 1e4, n // 6), 10 ** r.uniform(-200, 0, n // 6)]
    if name in ("ive", "kve"):
        return [r.uniform(-5, 10, n), lu(r, 0.1, 30, n)], \
               [np.concatenate([10 ** r.uniform(1.7, 3, n // 4), r.uniform(-10, 10, n // 4)]), 10 ** r.uniform(-5, 4, n // 2)]
    if name == "jv":
        return [r.uniform(0, 10, n), lu(r, 0.1, 30, n)], \
               [np.concatenate([10 ** r.uniform(1, 2.5, n // 4), r.uniform(-10, 0, n // 4)]), 10 ** r.uniform(-5, 3.5, n // 2)]
    if name == "owens_t":
        return [r.uniform(-5, 5, n // 2), r.uniform(-3, 3, n // 2)], [10 ** r.uniform(-5, 1.5, n // 4), 10 ** r.uniform(-5, 5, n // 4)]
    if name == "polygamma":
        return [r.integers(0, 7, n).astype(float), lu(r, 0.1, 10, n)], \
               [r.integers(2, 60, n // 2).astype(float), np.concatenate([10 ** r.uniform(-5, 5, n // 4), -10 ** r.uniform(-5, 2, n // 4)])]
    if name == "betainc":
        a, b = lu(r, 0.1, 20, n // 2), lu(r, 0.1, 20, n // 2)
        ah, bh = lu(r, 1e-3, 1e4, n // 4), lu(r, 1e-3, 1e4, n // 4)
        m = ah / (ah + bh)
        return [a, b, r.uniform(0, 1, n // 2)], [ah, bh, np.clip(m * np.exp(r.normal(0, 0.3, n // 4)), 1e-300, 1 - 1e-16)]
    if name == "betaincinv":
        return [lu(r, 0.5, 20, n // 6), lu(r, 0.5, 20, n // 6), r.uniform(0.01, 0.99, n // 6)], \
               [lu(r, 1e-2, 1e3, n // 8), lu(r, 1e-2, 1e3, n // 8), 10 ** r.uniform(-50, -0.5, n // 8)]
    if name == "hyp2f1":
        return [r.uniform(0.1, 3, n // 2), r.uniform(0.1, 3, n // 2), r.uniform(0.5, 5, n // 2), r.uniform(-3, 0.9, n // 2)], \
               [r.uniform(-5, 5, n // 2), r.uniform(-5, 5, n // 2), r.uniform(-5, 8, n // 2),
                np.concatenate([r.uniform(-20, 1, n // 4), 1 - 10 ** r.uniform(-8, -1, n // 8), -10 ** r.uniform(1, 8, n // 8)])]
    raise ValueError(name)


def reference(name, args):
    out = []
    for p in zip(*args):
        try:
            out.append(float(REF[name](*p)))
        except Exception:
            out.append(np.nan)
    return np.array(out)


def ulps(got, ref, dtype, envelope=None):
    scale = np.abs(ref) if envelope is None else np.maximum(np.abs(ref), envelope)
    tiny = np.finfo(dtype).tiny
    sp = np.spacing(np.maximum(scale, tiny).astype(dtype)).astype(np.float64)
    d = np.abs(got.astype(np.float64) - ref) / sp
    d[(got == ref) | (np.isnan(got) & np.isnan(ref))] = 0
    return d


def measure(name, args, ref, dtype):
    """Max ulps of kiln and SciPy on points whose reference is a normal number of dtype."""
    kargs = [np.asarray(a, dtype=dtype) for a in args]
    k = kiln(name, kargs, dtype)
    s = np.asarray(scipy_fn(name)(*kargs))
    lim = np.finfo(dtype)
    ok = np.isfinite(ref) & (np.abs(ref) >= lim.tiny) & (np.abs(ref) <= lim.max)
    env = None
    if name == "jv":
        env = np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(args[1].astype(np.float64)))))
    rref = ref.astype(dtype).astype(np.float64) if dtype == np.float32 else ref
    uk, us = ulps(k, rref, dtype, env), ulps(s.astype(dtype), rref, dtype, env)
    if not ok.any():
        return None
    return uk[ok].max(), np.percentile(uk[ok], 99), us[ok].max(), np.percentile(us[ok], 99), ok.sum()


def main():
    global LIB
    quick = "--quick" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(REF)
    n = 200 if quick else 1200
    LIB = build_shim()
    print(f"SciPy {scipy.__version__}, mpmath {mp.__version__}; ulps of the correctly rounded result "
          f"(p99 in brackets); dense = the usual domain, hard = tails, extremes, branch points")
    print("| function | f64 dense kiln | f64 dense SciPy | f64 hard kiln | f64 hard SciPy | f32 kiln | f32 SciPy |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        r = np.random.default_rng(sum(map(ord, name)))
        dense, hard = samples(name, r, n)
        cells = []
        for args in (dense, hard):
            res = measure(name, args, reference(name, args), np.float64)
            cells += [f"{res[0]:.0f} ({res[1]:.0f})", f"{res[2]:.0f} ({res[3]:.0f})"] if res else ["-", "-"]
        # float32: the dense sample's first points, rounded to float32.
        sub = [np.asarray(a[: max(50, n // 4)], dtype=np.float32).astype(np.float64) for a in dense]
        res = measure(name, sub, reference(name, sub), np.float32)
        cells += [f"{res[0]:.0f} ({res[1]:.0f})", f"{res[2]:.0f} ({res[3]:.0f})"] if res else ["-", "-"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
