#!/usr/bin/python3
"""Writes the MLP's weights (weights/*.npy, small and deterministic) and the output the sample
program must print (expected_output.txt), computed with NumPy.

Run with Debian's python3 (it has NumPy):  /usr/bin/python3 make_weights.py
The inputs below are the ones main.cpp hard-codes; keep them in step.
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

# logreg_predict's inputs (samples/logreg_predict.json): X, w, b.
LOGREG_X = np.array([[0.5, 1.0, -1.0], [2.0, 0.5, 1.0], [-1.0, -0.5, 2.0], [1.0, 1.0, 1.0]])
LOGREG_W = np.array([1.5, -2.0, 0.5])
LOGREG_B = -0.3

# mlp's input (samples/cmake-consumer/mlp.json): x, 4 rows of 4 features.
MLP_X = np.array([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, -0.5], [-0.3, 0.8, -0.6, 0.2], [2.0, 1.0, 0.0, -1.0]],
                 dtype=np.float32)


def weights():
    rng = np.random.default_rng(20240606)
    return {
        "W1": rng.normal(0.0, 0.8, (4, 8)).astype(np.float32),
        "b1": rng.normal(0.0, 0.1, (8,)).astype(np.float32),
        "W2": rng.normal(0.0, 0.8, (8, 3)).astype(np.float32),
        "b2": rng.normal(0.0, 0.1, (3,)).astype(np.float32),
    }


def fmt(values):
    """Four decimals, refusing a value so close to a rounding boundary that float32 noise in
    the compiled code could print it differently."""
    out = []
    for v in np.ravel(values):
        scaled = float(v) * 1e4
        if abs(scaled - np.floor(scaled) - 0.5) < 3e-3:
            raise SystemExit(f"{v} is too close to a rounding boundary; change the data")
        out.append(f"{v:.4f}")
    return " ".join(out)


def main():
    w = weights()
    (HERE / "weights").mkdir(exist_ok=True)
    for name, value in w.items():
        np.save(HERE / "weights" / f"{name}.npy", value)

    prob = 1.0 / (1.0 + np.exp(-(LOGREG_X @ LOGREG_W + LOGREG_B)))
    label = prob > 0.5
    h = np.maximum(MLP_X @ w["W1"] + w["b1"], np.float32(0))
    logits = h @ w["W2"] + w["b2"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    lines = [
        f"logreg_predict prob: {fmt(prob)}",
        "logreg_predict label: " + " ".join(str(int(v)) for v in label),
    ]
    for i in range(len(MLP_X)):
        lines.append(f"mlp row {i}: probs {fmt(probs[i])} label {int(np.argmax(probs[i]))}")
    (HERE / "expected_output.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
