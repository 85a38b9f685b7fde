"""Exports a radon-style hierarchical PyMC model with kiln, compiles its log density and
gradient into OUT/libradon.so (+ radon.h, radon.json), calls it from Python, and writes the
point it used to OUT/x.txt for main.cpp.

    python radon.py OUT
"""
import sys
from pathlib import Path

import numpy as np
import pymc as pm

import kiln.pymc


def radon_model():
    """log radon ~ Normal(a[county] + b * floor, sigma_y), a ~ Normal(mu_a, sigma_a)."""
    rng = np.random.default_rng(42)
    n_counties, n = 20, 500
    county = rng.integers(0, n_counties, n)
    floor = rng.integers(0, 2, n).astype(float)
    log_radon = rng.normal(1.3, 0.4, n_counties)[county] - 0.7 * floor + rng.normal(0, 0.3, n)
    with pm.Model() as model:
        mu_a = pm.Normal("mu_a", 0.0, 10.0)
        sigma_a = pm.HalfNormal("sigma_a", 5.0)
        a = pm.Normal("a", mu_a, sigma_a, shape=n_counties)
        b = pm.Normal("b", 0.0, 10.0)
        sigma_y = pm.Exponential("sigma_y", 1.0)
        pm.Normal("y", a[county] + b * floor, sigma_y, observed=log_radon)
    return model


def main(out: Path) -> None:
    model = radon_model()
    lib = kiln.pymc.compile_logp(model, out, name="radon")  # export + kiln compile + load
    x = lib.initial_point + 0.1 * np.arange(lib.ndim) / lib.ndim
    logp, dlogp = lib.logp_dlogp(x)

    point = lib.array_to_point(x)
    pymc_logp = model.compile_logp()(point)
    pymc_dlogp = model.compile_dlogp()(point)
    print(f"parameters: {lib.ndim} ({', '.join(lib.value_var_names)})")
    print(f"kiln logp  {logp:.12f}   PyMC {float(pymc_logp):.12f}")
    print(f"kiln |dlogp - PyMC dlogp|_max = {np.max(np.abs(dlogp - pymc_dlogp)):.3e}")
    np.savetxt(out / "x.txt", x[None, :], fmt="%.17g")
    with open(out / "python.txt", "w") as f:
        f.write(f"{logp:.17g}\n" + " ".join(f"{g:.17g}" for g in dlogp) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
