#!/usr/bin/env python3
"""ein's LLaMA block against torch.compile's, kernel by kernel (one GPU).

--bundles W=DIR,...: each bundle (ein-compile --target=cuda --devices=1 of
gen_llama_block.py's W) run through the runtime's C API under torch.profiler
(CUPTI sees the kernels of ein's CUDA graph as it sees PyTorch's), beside
torch.compile's block of the same workload (torch_llama_block.py's): the GPU
time per step of each kernel by name and by kind (gemm, attention, other).

--sdpa: for each workload's attention (causal, GQA as the block has it, bf16), PyTorch's
cuDNN SDPA timed with CUDA events:
  dense   q, k, v contiguous [b, h, s, d]
  views   q, k, v transposes of contiguous [b, s, h, d] (what the block hands it)
  hot     views, each call right after the block's largest gemm (the GPU warm
          from gemms, as inside the block); the gemm is timed apart and taken off

Run:  python3 bench/kernels_vs_compile.py --bundles w1-l3-8b-b1-s8k=gpu-large/w1-1 [--sdpa]
      (PYTHONPATH must reach python/ for einsummable)
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "peers"))
from cuda_events import timed  # noqa: E402
import torch_llama_block as peer  # noqa: E402


def attention_flops(B, S, nh, hd):
    return 4 * B * nh * S * S * hd / 2  # causal half


def classify(name):
    n = name.lower()
    if n.startswith("memcpy") or n.startswith("memset"):
        return "copy"
    if n.startswith("triton"):
        return "other"
    if any(s in n for s in ("fmha", "flash", "sdpa", "cudnn", "attention")):
        return "attention"
    if any(s in n for s in ("gemm", "nvjet", "xmma", "cutlass", "sm90_", "matmul")):
        return "gemm"
    return "other"


def sustain(run, seconds):
    """Runs run() for about `seconds` first, so that what follows is timed at
    the GPU's sustained clock, not at the boost clock of an idle start."""
    import time
    end = time.time() + seconds
    while time.time() < end:
        for _ in range(10):
            run()
        torch.cuda.synchronize()


def kernel_times(run, iters, timeline=None):
    """{kernel name: ms per call of run()} over `iters` calls under the profiler;
    with `timeline` (a label), also prints the last call's kernels in order:
    start, duration and the gap since the previous kernel ended, in us."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(iters):
            run()
        torch.cuda.synchronize()
    names, spans = {}, []
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.device_time if hasattr(e, "device_time") else e.cuda_time
        names[e.name] = names.get(e.name, 0) + us / iters / 1000
        spans.append((e.time_range.start, e.time_range.end, e.name))
    if timeline:
        spans.sort()
        per = len(spans) // iters
        last = spans[-per:]
        t0, prev = last[0][0], last[0][0]
        print(f"{timeline}: the last step's {per} kernels (us: start, duration, gap)")
        for start, end, n in last:
            print(f"   {start - t0:9.1f} {end - start:8.1f} {start - prev:7.1f}  {n[:90]}")
            prev = end
    return names


def show(name, who, names, top):
    kinds = {}
    for n, ms in names.items():
        kinds[classify(n)] = kinds.get(classify(n), 0) + ms
    print(f"{name} {who} ms/step: " +
          " ".join(f"{k}={kinds.get(k, 0):.3f}" for k in ("gemm", "attention", "other")) +
          f" total={sum(v for k, v in kinds.items() if k != 'copy'):.3f}"
          f" (copies {kinds.get('copy', 0):.3f})")
    for n, ms in sorted(names.items(), key=lambda kv: -kv[1])[:top]:
        print(f"   {ms:8.3f} ms  {classify(n):9s} {n[:120]}")


def compiled_block(name, dev, dt):
    H, nh, nkv, ffn, B, S = peer.WORKLOADS[name]
    blk = peer.Block(H, nh, nkv, ffn, 1, 0, False, dev, dt)
    x = torch.randn(B, S, H, device=dev, dtype=dt)
    pos = torch.arange(S, device=dev, dtype=torch.float32)
    inv = 10000.0 ** (-torch.arange(0, blk.hd // 2, device=dev, dtype=torch.float32)
                      / (blk.hd // 2))
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos().to(dt)[None, :, None, :], ang.sin().to(dt)[None, :, None, :]
    fn = torch.compile(lambda x, c, s: blk(x, c, s), dynamic=False)
    for _ in range(3):
        fn(x, cos, sin)
    return lambda: fn(x, cos, sin)


def ein_bundle(directory, dev):
    from einsummable._runtime import Bundle
    bundle = Bundle(directory)
    for i, info in enumerate(bundle.inputs):
        t = torch.randn(info.shape, dtype=torch.float32).to(
            torch.bfloat16 if info.dtype == "bf16" else torch.float32)
        assert t.numel() * t.element_size() == info.bytes, (info.dtype, info.shape)
        bundle.set_input(i, t.data_ptr(), info.bytes)
    bundle.run()
    return bundle


def sdpa(name, dev, dt, warmup, iters):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    H, nh, nkv, ffn, B, S = peer.WORKLOADS[name]
    hd = H // nh
    flops = attention_flops(B, S, nh, hd)
    gqa = nh != nkv
    bshd = [torch.randn(B, S, n, hd, device=dev, dtype=dt) for n in (nh, nkv, nkv)]
    views = [t.transpose(1, 2) for t in bshd]
    dense = [t.contiguous() for t in views]
    a_ = torch.randn(B * S, H, device=dev, dtype=dt)
    w_ = torch.randn(H, ffn, device=dev, dtype=dt)
    gemm = lambda: a_ @ w_
    gemm_ms = timed(gemm, warmup, iters)
    for backend, bname in ((SDPBackend.CUDNN_ATTENTION, "cudnn"),
                           (SDPBackend.FLASH_ATTENTION, "flash")):
        with sdpa_kernel(backend):
            for layout, qkv in (("dense", dense), ("views", views)):
                call = lambda: F.scaled_dot_product_attention(
                    *qkv, is_causal=True, enable_gqa=gqa)
                ms = timed(call, warmup, iters)
                print(f"{name} sdpa {bname} {layout} {ms:.4f} ms {flops / ms / 1e9:.1f} TFLOP/s")
                if layout == "views":
                    hot = timed(call, warmup, iters, before=gemm)
                    print(f"{name} sdpa {bname} hot {hot:.4f} ms {flops / hot / 1e9:.1f} TFLOP/s"
                          f" (each after a {B * S}x{ffn}x{H} gemm of {gemm_ms:.3f} ms)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundles", default="",
                    help="W=DIR,...: ein's bundle for workload W")
    ap.add_argument("--workloads", default="",
                    help="W,...: more workloads (torch.compile only); default: the bundles'")
    ap.add_argument("--sdpa", action="store_true", help="also time SDPA's layouts")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--sustain", type=float, default=0,
                    help="seconds of steps before each profile (the sustained clock)")
    ap.add_argument("--timeline", action="store_true",
                    help="print one step's kernels in order, with their gaps")
    a = ap.parse_args()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    dt = torch.bfloat16
    print(f"torch {torch.__version__}, cudnn {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name(0)}")
    bundles = dict(b.split("=", 1) for b in a.bundles.split(",") if b)
    workloads = list(bundles) + [w for w in a.workloads.split(",") if w and w not in bundles]
    for name in workloads:
        if name in bundles:
            bundle = ein_bundle(bundles[name], dev)
            ms = bundle.bench(warmup=a.warmup, iterations=a.iters)
            print(f"{name} ein bench {ms:.4f} ms")
            sustain(bundle.run, a.sustain)
            show(name, "ein", kernel_times(bundle.run, a.iters,
                                           a.timeline and f"{name} ein"), a.top)
            bundle.close()
        run = compiled_block(name, dev, dt)
        sustain(run, a.sustain)
        show(name, "torch.compile",
             kernel_times(run, a.iters, a.timeline and f"{name} torch.compile"), a.top)
        if a.sdpa:
            sdpa(name, dev, dt, a.warmup, a.iters)


if __name__ == "__main__":
    main()
