"""Inputs for import-numerics.test and the NumPy oracle it checks against.

    linalg_oracle.py inputs DIR   writes DIR/<program>.<arg>.npy and
                                  DIR/<program>.inputs (the --inputs list)
    linalg_oracle.py check DIR    compares DIR/<program>.{eval,run}.npy with
                                  NumPy's result on the same inputs
"""
import os
import sys

import numpy as np

SHAPES = {
    "mlp": [(12, 20), (20, 24), (24,), (24, 7)],
    "softmax": [(16, 16)],
    "bushy": [(97, 131), (131, 53), (53, 71), (71, 97)],
    "rope": [(8, 16), (8, 16), (8, 16)],
    "gqa": [(8, 4, 16), (2, 6, 16)],
}


def oracle(name, args):
    if name == "mlp":
        x, w1, b, w2 = args
        return np.maximum(x @ w1 + b, 0) @ w2
    if name == "softmax":
        (s,) = args
        masked = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
        p = np.exp(masked - masked.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)
    if name == "gqa":
        q, k = args
        scores = np.einsum("hid,hjd->hij", q, np.repeat(k, 4, axis=0))
        return scores + 16 * np.arange(8)[:, None, None]
    if name == "rope":
        x, cos, sin = args
        return x * cos + np.concatenate([-x[:, 8:], x[:, :8]], axis=1) * sin
    a, b, c, d = args
    return (a @ b) @ (c @ d)


def paths(directory, name):
    return [os.path.join(directory, f"{name}.{i}.npy") for i in range(len(SHAPES[name]))]


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(7)
    for name, shapes in SHAPES.items():
        files = paths(directory, name)
        if mode == "inputs":
            for path, shape in zip(files, shapes):
                np.save(path, (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32))
            with open(os.path.join(directory, name + ".inputs"), "w") as f:
                f.write(",".join(files))
            continue
        want = oracle(name, [np.load(p).astype(np.float64) for p in files])
        verdicts = []
        for kind in ("eval", "run"):
            got = np.load(os.path.join(directory, f"{name}.{kind}.npy"))
            err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
            verdicts.append(f"{kind} matches NumPy" if got.shape == want.shape and err < 1e-4
                            else f"{kind} DIFFERS (max_rel_err {err:.3g}, shape {got.shape})")
        print(f"{name}: " + ", ".join(verdicts))


if __name__ == "__main__":
    main()
