#!/usr/bin/env python3
"""Compares two ein-run --outputs files of one program (e.g. the same
bundle compiled for 1 and for 2 GPUs, run on the same seeded inputs) with
the metric of ein-run --check: max|a - b| / max(1, max|a|).

  python3 bench/compare_outputs.py A.npy B.npy [--dtype bf16]

bf16 outputs are 2-byte payloads (their bundle declares the type): pass
--dtype bf16 to read them as bfloat16. Needs NumPy.
"""
import argparse

import numpy as np


def load(path, dtype):
    a = np.load(path)
    if dtype == "bf16":
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--dtype", default="")
    args = parser.parse_args()
    a, b = load(args.a, args.dtype), load(args.b, args.dtype)
    if a.shape != b.shape:
        raise SystemExit(f"shapes differ: {a.shape} and {b.shape}")
    finite = np.isfinite(a).all() and np.isfinite(b).all()
    err = np.abs(a - b).max() / max(1.0, np.abs(a).max())
    print(f"shape={list(a.shape)} finite={finite} max_abs={np.abs(a).max():.4g} "
          f"max_rel_err={err:.3g}")


if __name__ == "__main__":
    main()
