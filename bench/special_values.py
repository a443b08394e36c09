#!/usr/bin/env python3
"""NaN and infinity through a bundle, against the float64 reference.

  special_values.py make BUNDLE DIR   writes the bundle's inputs (from its
      manifest: shapes and dtypes) into DIR/in<i>.npy, random with a NaN,
      a +inf and a -inf in the first input;
  special_values.py compare GOT.npy WANT.npy   exits 1 unless both hold NaN
      at the same places, the same infinities, and finite values within
      the dtype's tolerance; prints one line.

bench/check_special_values.sh runs it on the GPU machine around ein-run
and ein-eval (docs/testing.md, "Special values")."""

import json
import os
import sys

import numpy as np


def to_bf16_bits(x):
    bits = np.asarray(x, np.float32).view(np.uint32)
    # Round to nearest even; NaN kept a quiet NaN.
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[np.isnan(x)] = 0x7FC0
    return rounded


def from_bf16_bits(b):
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(np.float32)


def make(bundle, out):
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    rng = np.random.default_rng(7)
    os.makedirs(out, exist_ok=True)
    for i, arg in enumerate(manifest["inputs"]):
        shape, dtype = arg["type"]["shape"], arg["type"]["dtype"]
        x = (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
        if i == 0:
            flat = x.reshape(-1)
            flat[1], flat[flat.size // 2], flat[-2] = np.nan, np.inf, -np.inf
        numpy_type = {"f32": np.float32, "f16": np.float16, "f64": np.float64}
        data = (to_bf16_bits(x) if dtype == "bf16" else
                x.astype(numpy_type[dtype]))
        np.save(os.path.join(out, "in%d.npy" % i), data)
        print(os.path.join(out, "in%d.npy" % i))


def load(path, like=None):
    x = np.load(path)
    if x.dtype == np.uint16:
        x = from_bf16_bits(x)
    return x.astype(np.float64)


def compare(got_path, want_path):
    got, want = load(got_path), load(want_path)
    bf16 = np.load(got_path).dtype == np.uint16
    tol = 2e-2 if bf16 else 1e-4
    same_nan = np.array_equal(np.isnan(got), np.isnan(want))
    same_inf = (np.array_equal(np.isposinf(got), np.isposinf(want)) and
                np.array_equal(np.isneginf(got), np.isneginf(want)))
    finite = np.isfinite(want) & np.isfinite(got)
    scale = max(1.0, np.abs(want[finite]).max()) if finite.any() else 1.0
    err = (np.abs(got[finite] - want[finite]).max() / scale
           if finite.any() else 0.0)
    ok = same_nan and same_inf and err <= tol
    print("nan_want=%d nan_got=%d inf_same=%s max_rel_err=%.3g %s" % (
        np.isnan(want).sum(), np.isnan(got).sum(), same_inf, err,
        "ok" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
