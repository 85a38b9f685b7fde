#!/usr/bin/env python3
"""Writes W11, the AR(1) log-likelihood written with Scan (issue 18), float64 and float32, by
exporting real PyTensor graphs through kiln's Python package. Run with a venv that has PyTensor
and kiln (scripts/python-env makes build/venv-pt3):
    build/venv-pt3/bin/python bench/graphs/make_scan_graphs.py
Writes next to itself; the JSON files are committed.

The likelihood is the one a time-series model writes by hand with `scan`: an untraced-looking
running sum carried as a sit-sot state, one step per observation, so the loop cannot be turned
into an elementwise map. Per step t (1 <= t < n):
    acc_t = acc_{t-1} - 0.5 * ((y_t - phi * y_{t-1}) / sigma)^2
and the graph returns acc_{n-1} - (n - 1) * (log(sigma) + 0.5 * log(2 pi)).
"""
import os

import numpy as np
import pytensor
import pytensor.tensor as pt

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))


def ar1_loglik(dtype):
    y = pt.vector("y", dtype=dtype)
    phi = pt.scalar("phi", dtype=dtype)
    sigma = pt.scalar("sigma", dtype=dtype)

    def step(y_t, y_prev, acc, phi, sigma):
        z = (y_t - phi * y_prev) / sigma
        return acc - np.asarray(0.5, dtype=dtype) * z * z

    acc0 = pt.zeros((), dtype=dtype)
    accs = pytensor.scan(step, sequences=[y[1:], y[:-1]], outputs_info=[acc0], non_sequences=[phi, sigma],
                         return_updates=False)  # PyTensor 3.0's spelling; 2.x returned (outputs, updates)
    n1 = pt.cast(y.shape[0] - 1, dtype)
    const = np.asarray(0.5 * np.log(2 * np.pi), dtype=dtype)
    logp = accs[-1] - n1 * (pt.log(sigma) + const)
    return [y, phi, sigma], logp


def main():
    for dtype in ("float64", "float32"):
        inputs, logp = ar1_loglik(dtype)
        name = "w11_ar1_scan_" + dtype
        kiln.from_pytensor([logp], inputs, rewrite=True, name=name, path=os.path.join(HERE, name + ".json"))
        print("wrote", name + ".json")


if __name__ == "__main__":
    main()
