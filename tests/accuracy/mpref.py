"""High-precision references (mpmath) for the special functions, where mpmath's own routines
are slow or fail."""
import mpmath as mp

def gamma_pq(a, x, dps=40):
    """(P, Q) of the regularized incomplete gamma, as mpf, by the series (x < a) or Legendre's
    continued fraction (x >= a), both converging to 'dps' digits."""
    with mp.workdps(dps):
        A, X = mp.mpf(a), mp.mpf(x)
        if X == 0:
            return mp.mpf(0), mp.mpf(1)
        lpref = A * mp.log(X) - X - mp.loggamma(A)
        if X < A + 1:
            term = mp.mpf(1) / A; s = term; n = 0
            while True:
                n += 1
                term *= X / (A + n)
                s += term
                if abs(term) < s * mp.mpf(10) ** (-dps - 2):
                    break
            p = mp.exp(lpref) * s
            return p, 1 - p
        # Lentz CF
        tiny = mp.mpf(10) ** (-dps * 3)
        b = X + 1 - A; c = 1 / tiny; d = 1 / b; h = d; i = 0
        while True:
            i += 1
            an = -i * (i - A)
            b += 2
            d = an * d + b
            if abs(d) < tiny: d = tiny
            c = b + an / c
            if abs(c) < tiny: c = tiny
            d = 1 / d
            dl = d * c
            h *= dl
            if abs(dl - 1) < mp.mpf(10) ** (-dps - 2):
                break
        q = mp.exp(lpref) * h
        return 1 - q, q

def gamma_inv(a, y, lower, dps=40):
    """x with P(a, x) = y (lower) or Q(a, x) = y, by Newton on log x in mpmath."""
    with mp.workdps(dps):
        A, Y = mp.mpf(a), mp.mpf(y)
        j = 0 if lower else 1
        if Y > 0.5:
            Y = 1 - Y; j = 1 - j
        # initial guess from float
        import scipy.special as sc
        x0 = float(sc.gammaincinv(a, float(Y)) if j == 0 else sc.gammainccinv(a, float(Y)))
        if not (x0 > 0) or not mp.isfinite(x0): x0 = float(A)
        t = mp.log(mp.mpf(x0))
        for _ in range(200):
            X = mp.exp(t)
            f = gamma_pq(A, X, dps)[j]
            lpref = A * mp.log(X) - X - mp.loggamma(A)
            slope = mp.exp(lpref) / f
            h = mp.log(f) - mp.log(Y)
            if j == 1: h = -h
            st = h / slope
            t -= st
            if abs(st) < mp.mpf(10) ** (-dps + 5): break
        return mp.exp(t)

def beta_pq(a, b, x, dps=50):
    """(I_x(a,b), 1 - I_x(a,b)) by the continued fraction on the convergent side, in mpmath."""
    with mp.workdps(dps + 20):
        A, B, X = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        Y = 1 - X
        if X == 0: return mp.mpf(0), mp.mpf(1)
        if X == 1: return mp.mpf(1), mp.mpf(0)
        swap = X > (A + 1) / (A + B + 2)
        if swap:
            A, B, X, Y = B, A, Y, X
        lpref = A * mp.log(X) + B * mp.log(Y) - (mp.loggamma(A) + mp.loggamma(B) - mp.loggamma(A + B))
        tiny = mp.mpf(10) ** (-(dps + 20) * 3)
        c = mp.mpf(1); d = 1 - (A + B) * X / (A + 1)
        if abs(d) < tiny: d = tiny
        d = 1 / d; h = d; m = 0
        while True:
            m += 1
            m2 = 2 * m
            aa = m * (B - m) * X / ((A + m2 - 1) * (A + m2))
            d = 1 + aa * d; d = tiny if abs(d) < tiny else d
            c = 1 + aa / c; c = tiny if abs(c) < tiny else c
            d = 1 / d; h *= d * c
            aa = -(A + m) * (A + B + m) * X / ((A + m2) * (A + m2 + 1))
            d = 1 + aa * d; d = tiny if abs(d) < tiny else d
            c = 1 + aa / c; c = tiny if abs(c) < tiny else c
            d = 1 / d; dl = d * c; h *= dl
            if abs(dl - 1) < mp.mpf(10) ** (-dps - 5) or m > 200000: break
        w = mp.exp(lpref) * h / A
        return (1 - w, w) if swap else (w, 1 - w)

def beta_inv(a, b, y, dps=40):
    """x with I_x(a,b) = y: Newton on log I (or log(1 - I)) against log x (or log(1 - x)),
    bracketed, in mpmath -- as robust for x = 1e-300 as for x near 1."""
    import scipy.special as sc
    with mp.workdps(dps):
        A, B, Y = mp.mpf(a), mp.mpf(b), mp.mpf(y)
        lower = Y <= 0.5
        target = Y if lower else 1 - Y
        x0 = float(sc.betaincinv(a, b, y))
        near_one = x0 > 0.5
        if near_one:
            u = mp.log(mp.mpf(1 - x0)) if x0 < 1 else mp.mpf(-40)
        else:
            u = mp.log(mp.mpf(x0)) if x0 > 0 else mp.mpf(-700)
        lo, hi = mp.mpf("-inf"), mp.mpf(0)
        lbeta = mp.loggamma(A) + mp.loggamma(B) - mp.loggamma(A + B)
        for _ in range(500):
            e = mp.exp(u)
            X, W = (1 - e, e) if near_one else (e, 1 - e)
            p, q = beta_pq(A, B, X, dps)
            f = p if lower else q
            sign = 1 if lower != near_one else -1
            h = sign * (mp.log(f) - mp.log(target))
            if h < 0: lo = u
            else: hi = u
            slope = mp.exp(A * mp.log(X) + B * mp.log(W) - lbeta) / ((X if near_one else W) * f)
            nxt = u - h / slope
            if not (lo < nxt < hi):
                nxt = (lo + hi) / 2 if mp.isfinite(lo) else (u / 2 if h < 0 else 2 * u - 1)
            if abs(nxt - u) < mp.mpf(10) ** (-dps + 6) * max(1, abs(u)):
                u = nxt
                break
            u = nxt
        e = mp.exp(u)
        return 1 - e if near_one else e
