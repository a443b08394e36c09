#!/usr/bin/env python3
"""Every gemm of a CUDA bundle against PyTorch on the same shapes.

ein's time per gemm step comes from `ein-run BUNDLE --profile=TRACE.json`
(the step-by-step profiled run: each step's duration on its stream); PyTorch's
from torch.matmul on tensors of the step's operand shapes, layouts
(transposes) and dtypes, timed with CUDA events over --iters launches after
warm-ups. Prints one row per distinct gemm problem (rows, cols, inner,
batch, transposes, dtypes) with its count, ein's and PyTorch's milliseconds
and the ratio, and the totals.

  python3 bench/gemm_vs_torch.py BUNDLE TRACE.json [TRACE2.json ...]

With several traces (say EIN_GEMM_TUNE=off and on), one ein column each.
"""

import argparse
import collections
import json
import os
import sys

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def problems(bundle):
    with open(os.path.join(bundle, "manifest.json")) as f:
        m = json.load(f)
    buffers = {b["name"]: b["type"] for b in m["buffers"]}
    out = []
    for i, s in enumerate(m["steps"]):
        if s.get("call") != "gemm":
            continue
        a, b, c = buffers[s["a"]], buffers[s["b"]], buffers[s["c"]]
        key = (tuple(a["shape"]), tuple(b["shape"]), tuple(c["shape"]),
               bool(s.get("transpose_a")), bool(s.get("transpose_b")),
               a["dtype"], c["dtype"])
        out.append((i, key, s.get("label", "")))
    return out


def ein_times(trace):
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    return {e["args"]["step"]: e["dur"] / 1e3 for e in events
            if e["ph"] == "X"}


def torch_ms(key, warmup, iters):
    sa, sb, sc, ta, tb, dt, dc = key
    a = torch.randn(sa, dtype=DTYPES[dt], device="cuda")
    b = torch.randn(sb, dtype=DTYPES[dt], device="cuda")
    x = a.mT if ta else a
    y = b.mT if tb else b
    out = torch.empty(sc, dtype=DTYPES[dc], device="cuda")
    def run():
        if dc == dt:
            torch.matmul(x, y, out=out)
        else:
            out.copy_(torch.matmul(x, y))
    for _ in range(warmup):
        run()
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(iters):
        run()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) / iters


def describe(key):
    sa, sb, sc, ta, tb, dt, dc = key
    k = sa[-2] if ta else sa[-1]
    batch = 1
    for d in sc[:-2]:
        batch *= d
    text = "%dx%dx%d" % (sc[-2], sc[-1], k)
    if batch > 1:
        text += " b%d" % batch
    return text + " %s%s %s" % ("T" if ta else "N", "T" if tb else "N", dt)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    steps = problems(args.bundle)
    eins = [ein_times(t) for t in args.traces]
    groups = collections.OrderedDict()
    for i, key, label in steps:
        groups.setdefault(key, []).append(i)
    names = [os.path.basename(t).replace(".json", "") for t in args.traces]
    print("%-32s %5s %s %9s %s" % ("gemm (MxNxK)", "count",
                                   " ".join("%9s" % n for n in names),
                                   "torch", " ".join("%7s" % ("r_" + n[-4:])
                                                     for n in names)))
    totals = [0.0] * len(eins)
    torch_total = 0.0
    for key, indices in groups.items():
        mine = [sum(e.get(i, 0.0) for i in indices) for e in eins]
        theirs = torch_ms(key, args.warmup, args.iters) * len(indices)
        for j, v in enumerate(mine):
            totals[j] += v
        torch_total += theirs
        print("%-32s %5d %s %9.4f %s" % (
            describe(key), len(indices), " ".join("%9.4f" % v for v in mine),
            theirs, " ".join("%7.2f" % (v / theirs) for v in mine)))
    print("%-32s %5d %s %9.4f %s" % (
        "total", len(steps), " ".join("%9.4f" % v for v in totals),
        torch_total, " ".join("%7.2f" % (v / torch_total) for v in totals)))
    print("(ms; ratio = ein / torch, below 1 ein is faster; ein from the "
          "profiled step-by-step run, torch.matmul timed with CUDA events)")


if __name__ == "__main__":
    sys.exit(main())
