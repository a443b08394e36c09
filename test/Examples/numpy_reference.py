#!/usr/bin/env python3
"""An oracle independent of ein: recomputes a bundled example with NumPy in
float64 from the inputs ein-eval saved, and compares ein-eval's output.

  numpy_reference.py EXAMPLE --inputs=a.npy,b.npy,... --output=o.npy [--threshold=T]

EXAMPLE: matrix_chain, mlp or llama_block (the small block bundled in
examples/, whose arguments are x, norm1, wq, wk, wv, wo, norm2, wg, wu, wd,
then either the rotation table rope [2, 2, seq, d/2] or cos and sin
[seq, d/2]). Prints max_rel_err = max|got - ref| / max(1, max|ref|) and exits 1
above the threshold (default 1e-6, f32 storage of the result).
"""
import argparse
import sys

import numpy as np


def matrix_chain(a, b, c, d):
    return ((a @ b) @ c) @ d


def mlp(x, w1, w2):
    return x + np.maximum(x @ w1, 0) @ w2


def rms_norm(x, w, eps=1e-5):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, table):  # x: [B, S, heads, hd]; table: rotation [2, 2, S, hd/2]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    r = table[:, :, None, :, None, :]  # [2, 2, 1, S, 1, hd/2]
    return np.concatenate([r[0, 0] * x1 + r[0, 1] * x2, r[1, 0] * x1 + r[1, 1] * x2], axis=-1)


def llama_block(x, norm1, wq, wk, wv, wo, norm2, wg, wu, wd, *tables, heads=4, kv_heads=2):
    if len(tables) == 2:  # cos, sin: the rotate-half form's tables
        cos, sin = tables
        table = np.stack([np.stack([cos, -sin]), np.stack([sin, cos])])
    else:
        (table,) = tables
    B, S, H = x.shape
    hd = H // heads
    h = rms_norm(x, norm1)
    q = rope((h @ wq).reshape(B, S, heads, hd), table)
    k = rope((h @ wk).reshape(B, S, kv_heads, hd), table)
    v = (h @ wv).reshape(B, S, kv_heads, hd)
    group = heads // kv_heads
    k = np.repeat(k, group, axis=2)  # query head j reads KV head j // group
    v = np.repeat(v, group, axis=2)
    scores = np.einsum("bshd,bthd->bhst", q, k) / np.sqrt(hd)
    scores = np.where(np.tril(np.ones((S, S), dtype=bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    att = np.einsum("bhst,bthd->bshd", p, v).reshape(B, S, H)
    x1 = x + att @ wo
    h2 = rms_norm(x1, norm2)
    g = h2 @ wg
    m = (g / (1 + np.exp(-g)) * (h2 @ wu)) @ wd
    return x1 + m


EXAMPLES = {"matrix_chain": matrix_chain, "mlp": mlp, "llama_block": llama_block}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("example", choices=sorted(EXAMPLES))
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--threshold", type=float, default=1e-6)
    a = ap.parse_args()
    inputs = [np.load(p).astype(np.float64) for p in a.inputs.split(",")]
    ref = EXAMPLES[a.example](*inputs)
    got = np.load(a.output).astype(np.float64)
    if got.shape != ref.shape:
        print(f"shape mismatch: got {got.shape}, reference {ref.shape}")
        return 1
    err = np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))
    ok = err <= a.threshold
    print(f"max_rel_err={err:.3e} {'ok' if ok else 'ABOVE ' + str(a.threshold)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
