"""PyMC models the tests compare with PyMC (test_pymc.py) and the radon bench uses: the issue's
list (eight schools, radon, logistic GLM, categorical, GP, censored/truncated) and a few more."""
from __future__ import annotations

import numpy as np
import pymc as pm


def eight_schools(centered: bool):
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        if centered:
            theta = pm.Normal("theta", mu, tau, shape=8)
        else:
            theta_t = pm.Normal("theta_t", 0, 1, shape=8)
            theta = pm.Deterministic("theta", mu + tau * theta_t)
        pm.Normal("obs", theta, sigma, observed=y)
    return model


def radon(n_counties: int = 12, n: int = 200):
    """A varying-intercept model indexed by county (mu[idx]: AdvancedSubtensor1 in PyTensor 2.x).
    bench/python/bench_radon.py uses it at the real data set's sizes (85 counties, 919 houses)."""
    rng = np.random.default_rng(11)
    county = rng.integers(0, n_counties, n)
    floor = rng.integers(0, 2, n).astype(float)
    log_radon = rng.normal(1.0, 0.5, n_counties)[county] - 0.6 * floor + rng.normal(0, 0.3, n)
    with pm.Model(coords={"county": np.arange(n_counties)}) as model:
        county_idx = pm.Data("county_idx", county)
        floor_x = pm.Data("floor", floor)
        mu_a = pm.Normal("mu_a", 0.0, 10.0)
        sigma_a = pm.HalfNormal("sigma_a", 5.0)
        a = pm.Normal("a", mu_a, sigma_a, dims="county")
        b = pm.Normal("b", 0.0, 10.0)
        sigma_y = pm.Exponential("sigma_y", 1.0)
        pm.Normal("y", a[county_idx] + b * floor_x, sigma_y, observed=log_radon)
    return model


def logistic_glm():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 4))
    y = (rng.uniform(size=150) < 1 / (1 + np.exp(-(X @ [1.0, -2.0, 0.5, 0.0] + 0.3)))).astype(int)
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 2, shape=4)
        alpha = pm.Normal("alpha", 0, 5)
        pm.Bernoulli("y", logit_p=alpha + pm.math.dot(X, beta), observed=y)
    return model


def censored():
    rng = np.random.default_rng(8)
    data = np.clip(rng.normal(0.5, 1.2, 80), -1.0, 2.0)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 2)
        sigma = pm.HalfNormal("sigma", 2)
        pm.Censored("y", pm.Normal.dist(mu, sigma), lower=-1.0, upper=2.0, observed=data)
    return model


def truncated():
    rng = np.random.default_rng(9)
    data = np.abs(rng.normal(0.3, 1.0, 60))
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 2)
        sigma = pm.HalfNormal("sigma", 2)
        pm.Truncated("y", pm.Normal.dist(mu, sigma), lower=0.0, observed=data)
    return model


def distributions_zoo():
    """Likelihoods exercising gammaln, log1p, logit/log transforms of bounded variables."""
    rng = np.random.default_rng(10)
    with pm.Model() as model:
        nu = pm.Gamma("nu", 2.0, 0.1)
        scale = pm.LogNormal("scale", 0.0, 1.0)
        p = pm.Beta("p", 2.0, 3.0)
        rate = pm.Exponential("rate", 1.0)
        pm.StudentT("t", nu=nu, mu=0.0, sigma=scale, observed=rng.standard_t(5, 30))
        pm.Binomial("k", n=10, p=p, observed=rng.binomial(10, 0.4, 20))
        pm.Poisson("c", mu=rate * 3, observed=rng.poisson(3, 25))
    return model


def categorical():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(40, 2))
    y = rng.integers(0, 3, 40)
    with pm.Model() as model:
        W = pm.Normal("W", 0, 1, shape=(2, 3))
        pm.Categorical("y", p=pm.math.softmax(pm.math.dot(X, W), axis=-1), observed=y)
    return model


def gaussian_process():
    rng = np.random.default_rng(13)
    X = np.linspace(0, 5, 15)[:, None]
    y = np.sin(X[:, 0]) + rng.normal(0, 0.1, 15)
    with pm.Model() as model:
        ell = pm.Gamma("ell", 2, 1)
        eta = pm.HalfNormal("eta", 1)
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ell)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=0.1)
    return model


def mvnormal_lkj():
    """A correlated Gaussian with an LKJ prior on its Cholesky factor (PyMC's LKJCholeskyCov:
    the packed-triangle transform, Cholesky-based MvNormal)."""
    rng = np.random.default_rng(14)
    data = rng.multivariate_normal([0.5, -1.0, 0.0], [[1.0, 0.5, 0.2], [0.5, 2.0, -0.3], [0.2, -0.3, 0.8]], 50)
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0, shape=3))
        mu = pm.Normal("mu", 0.0, 2.0, shape=3)
        pm.MvNormal("y", mu=mu, chol=chol, observed=data)
    return model


def garch_scan():
    """A GARCH(1,1) likelihood written with pytensor.scan (a sit-sot variance beside a nit-sot of
    log-likelihood terms) in a Potential: PyMC's gradient of it is pytensor.grad's backward scan,
    a Scan with mit-mot buffers."""
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(15)
    returns = 0.3 * rng.normal(size=40)
    with pm.Model() as model:
        omega = pm.HalfNormal("omega", 0.2)
        alpha = pm.Beta("alpha", 2, 5)
        beta = pm.Beta("beta", 5, 2)
        s0 = pm.HalfNormal("s0", 0.5)
        ret = pt.as_tensor_variable(returns)

        def step(rm1, rt, s2m1, omega, alpha, beta):
            s2 = omega + alpha * rm1**2 + beta * s2m1
            return s2, -0.5 * (pt.log(2 * np.pi * s2) + rt**2 / s2)

        _, terms = pytensor.scan(step, sequences=[dict(input=ret, taps=[-1, 0])], outputs_info=[s0, None],
                                 non_sequences=[omega, alpha, beta], return_updates=False)
        pm.Potential("loglik", terms.sum())
    return model
