#!/usr/bin/env python3
"""The PyTorch peer of the kernel-speed benchmark: the same bf16 ops at the
same shapes as bench/gen_kernel_bench.py, each timed with CUDA events
(median of --iters after --warmup), one line `NAME MS` per op."""
import argparse

import torch
import torch.nn.functional as F

from cuda_events import timed
from gen_kernel_bench import RAGGED_GEMMS

T = 16384


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    dev, bf16 = "cuda", torch.bfloat16
    x = torch.randn(T, 4096, device=dev, dtype=bf16)
    y = torch.randn(T, 4096, device=dev, dtype=bf16)
    g = torch.randn(T, 14336, device=dev, dtype=bf16)
    u = torch.randn(T, 14336, device=dev, dtype=bf16)
    w = torch.randn(4096, device=dev, dtype=bf16)
    b = torch.randn(4096, 4096, device=dev, dtype=bf16)
    bias = torch.randn(4096, device=dev, dtype=bf16)
    x768 = torch.randn(8192, 768, device=dev, dtype=bf16)
    w768 = torch.randn(768, device=dev, dtype=bf16)
    b768 = torch.randn(768, device=dev, dtype=bf16)

    def rms():
        xf = x.float()
        r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
        return (xf * r).to(bf16) * w

    ops = {
        "add": lambda: x + y,
        "scale": lambda: x * 2,
        "copy": lambda: y.copy_(x),
        "silu_mul": lambda: F.silu(g) * u,
        "rms_norm": rms,
        "rms_norm_fused": lambda: F.rms_norm(x, (4096,), w, 1e-5),
        "layer_norm": lambda: F.layer_norm(x, (4096,), w, bias, 1e-5),
        "layer_norm_768": lambda: F.layer_norm(x768, (768,), w768, b768,
                                               1e-5),
        "gemm": lambda: x @ b,
    }
    # What a torch.compile user gets (Inductor's Triton kernel).
    ops["layer_norm_compiled"] = torch.compile(
        lambda: F.layer_norm(x, (4096,), w, bias, 1e-5))
    ops["rms_norm_compiled"] = torch.compile(
        lambda: F.rms_norm(x, (4096,), w, 1e-5))
    for name, (m, k, n) in RAGGED_GEMMS.items():
        ga = torch.randn(m, k, device=dev, dtype=bf16)
        gb = torch.randn(k, n, device=dev, dtype=bf16)
        ops[name] = lambda ga=ga, gb=gb: ga @ gb
    for name, fn in ops.items():
        print(f"{name} {timed(fn, args.warmup, args.iters):.4f}", flush=True)


if __name__ == "__main__":
    main()
