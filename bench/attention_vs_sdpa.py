#!/usr/bin/env python3
"""The fused attention of the runtime (libein_attention.so, include/ein/attention.h)
next to PyTorch's scaled_dot_product_attention, on one GPU, in one process.

  --check  correctness: causal and not, GQA groups 1, 4 and 8, 1 to 32768
           tokens, head dims 64 and 128, bf16 and f16, diagonal offsets
           (token-split blocks), the log-sum-exp output and the
           online-softmax combine of key-split parts; every implementation
           (cudnn, kernel) against PyTorch SDPA for the output and an
           f32 computation for the log-sum-exp. Threshold: bf16 2e-2, f16
           2e-3 (DESIGN.md section 3), metric max|got - ref| / max(1, max|ref|).
  --bench  speed: causal GQA 32/8 heads, d=128, bf16, batch 1 at 8K, 32K and
           128K tokens; median of --iters CUDA-event timings after --warmup;
           TFLOP/s count the causal half (as bench/peers/torch_sdpa.py).

Exit status 1 when any check fails."""
import argparse
import ctypes
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_events import timed

THRESHOLD = {torch.bfloat16: 2e-2, torch.float16: 2e-3}
NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


class Desc(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("batch", "heads", "kv_heads", "queries", "keys", "head_dim",
                 "value_dim")] + [
        ("dtype", ctypes.c_char_p), ("scale", ctypes.c_float),
        ("causal", ctypes.c_int), ("diagonal", ctypes.c_int64),
        ("with_lse", ctypes.c_int)]


class Library:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.ein_attention_last_error.restype = ctypes.c_char_p
        L.ein_attention_create.argtypes = [ctypes.POINTER(Desc), ctypes.c_char_p,
                                           ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_void_p)]
        L.ein_attention_destroy.argtypes = [ctypes.c_void_p]
        L.ein_attention_workspace_bytes.argtypes = [ctypes.c_void_p]
        L.ein_attention_workspace_bytes.restype = ctypes.c_size_t
        L.ein_attention_name.argtypes = [ctypes.c_void_p]
        L.ein_attention_name.restype = ctypes.c_char_p
        L.ein_attention_run.argtypes = [ctypes.c_void_p] * 8
        L.ein_attention_combine.argtypes = [
            ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p,
            ctypes.c_void_p, ctypes.c_void_p]

    def error(self):
        return self.lib.ein_attention_last_error().decode()

    def create(self, q, k, v, causal, diagonal, with_lse, implementation):
        d = Desc(q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2],
                 q.shape[3], v.shape[3], NAMES[q.dtype].encode(),
                 1 / math.sqrt(q.shape[3]), int(causal), diagonal, int(with_lse))
        handle = ctypes.c_void_p()
        if self.lib.ein_attention_create(ctypes.byref(d), implementation.encode(),
                                         torch.cuda.current_device(),
                                         ctypes.byref(handle)):
            return None, self.error()
        return Attention(self, handle), None


class Attention:
    def __init__(self, library, handle):
        self.library, self.handle = library, handle
        L = library.lib
        self.name = L.ein_attention_name(handle).decode()
        size = L.ein_attention_workspace_bytes(handle)
        self.workspace = torch.empty(max(size, 1), dtype=torch.uint8, device="cuda")

    def __call__(self, q, k, v, o, lse):
        stream = torch.cuda.current_stream().cuda_stream
        if self.library.lib.ein_attention_run(
                self.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                lse.data_ptr() if lse is not None else None,
                self.workspace.data_ptr(), stream):
            raise RuntimeError(self.library.error())

    def __del__(self):
        self.library.lib.ein_attention_destroy(self.handle)


def reference(q, k, v, causal, diagonal):
    """PyTorch SDPA for o (rows with no visible key: 0), f32 math for lse."""
    s, t = q.shape[2], k.shape[2]
    mask = None
    if causal:
        rows = torch.arange(s, device="cuda")[:, None]
        mask = torch.arange(t, device="cuda")[None, :] <= rows + diagonal
    if causal and diagonal == 0 and s == t:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    else:
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    o = torch.nan_to_num(o, nan=0.0)
    if mask is not None:
        o = o * mask.any(1)[None, None, :, None]
    group = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(group, dim=1)
    scale = 1 / math.sqrt(q.shape[3])
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device="cuda")
    step = max(1, (1 << 28) // (q.shape[0] * q.shape[1] * t))
    for first in range(0, s, step):
        last = min(s, first + step)
        scores = q[:, :, first:last].float() @ kf.transpose(2, 3) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask[first:last], -math.inf)
        lse[:, :, first:last] = torch.logsumexp(scores, dim=-1)
    return o, lse


def relative_error(got, ref):
    got, ref = got.double(), ref.double()
    if got.shape != ref.shape:
        return math.inf
    both_inf = torch.isinf(ref) & (got == ref)
    diff = torch.where(both_inf, torch.zeros_like(ref), (got - ref).abs())
    finite = ref[~torch.isinf(ref)]
    scale = max(1.0, finite.abs().max().item() if finite.numel() else 0.0)
    return diff.max().item() / scale


def inputs(b, h, hk, s, t, d, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    make = lambda *shape: (torch.randn(*shape, generator=g, device="cuda",
                                       dtype=torch.float32)).to(dtype)
    return make(b, h, s, d), make(b, hk, t, d), make(b, hk, t, d)


def check(lib, implementations):
    cases = []  # (b, h, hk, s, t, d, dtype, causal, diagonal, lse)
    for s in (1, 127, 4096, 32768):
        for h, hk in ((8, 8), (32, 8), (32, 4)):
            for causal in (False, True):
                if s == 32768 and (h, hk) != (32, 8):
                    continue
                cases.append((1, h, hk, s, s, 128, torch.bfloat16, causal, 0,
                              causal))
    cases += [
        (1, 32, 8, 127, 300, 128, torch.bfloat16, True, 173, True),   # bottom-right
        (1, 32, 8, 256, 256, 128, torch.bfloat16, True, -64, True),   # rows see nothing
        (1, 32, 8, 512, 1024, 128, torch.bfloat16, True, 512, True),  # a later query block
        (1, 32, 8, 1000, 1000, 128, torch.bfloat16, True, 100, False),
        (2, 16, 4, 777, 777, 128, torch.bfloat16, True, 0, True),
        (2, 16, 4, 2048, 2048, 64, torch.bfloat16, True, 0, True),
        (1, 32, 8, 4096, 4096, 128, torch.float16, True, 0, True),
        (1, 8, 2, 333, 4096, 64, torch.float16, False, 0, True),
    ]
    failures = 0
    print(f"{'impl':8} {'case':58} {'o err':>9} {'lse err':>9}  result")
    for impl in implementations:
        for seed, (b, h, hk, s, t, d, dtype, causal, diagonal, with_lse) in enumerate(cases):
            q, k, v = inputs(b, h, hk, s, t, d, dtype, seed)
            label = (f"{NAMES[dtype]} b{b} h{h}/{hk} s{s} t{t} d{d}"
                     f"{' causal' if causal else ''}{f' diag {diagonal}' if diagonal else ''}"
                     f"{' lse' if with_lse else ''}")
            attention, why = lib.create(q, k, v, causal, diagonal, with_lse, impl)
            if attention is None:
                print(f"{impl:8} {label:58} {'-':>9} {'-':>9}  unsupported: {why[:150]}")
                continue
            o = torch.full((b, h, s, d), float("nan"), dtype=dtype, device="cuda")
            lse = (torch.full((b, h, s), float("nan"), device="cuda")
                   if with_lse else None)
            attention(q, k, v, o, lse)
            torch.cuda.synchronize()
            ref_o, ref_lse = reference(q, k, v, causal, diagonal)
            err_o = relative_error(o, ref_o)
            err_l = relative_error(lse, ref_lse) if with_lse else 0.0
            ok = err_o <= THRESHOLD[dtype] and err_l <= THRESHOLD[dtype]
            failures += not ok
            print(f"{impl:8} {label:58} {err_o:9.2e} "
                  f"{(f'{err_l:9.2e}' if with_lse else '-'):>9}  "
                  f"{'ok' if ok else 'FAIL'} ({attention.name})", flush=True)
        failures += check_combine(lib, impl)
    return failures


def check_combine(lib, impl):
    """Key-split parts with their lse, combined, against the whole."""
    b, h, hk, s, d, dtype = 1, 32, 8, 4096, 128, torch.bfloat16
    q, k, v = inputs(b, h, hk, s, s, d, dtype, 99)
    bounds = (0, 1000, 2500, s)
    outs, lses = [], []
    for first, last in zip(bounds, bounds[1:]):
        kp, vp = k[:, :, first:last].contiguous(), v[:, :, first:last].contiguous()
        attention, why = lib.create(q, kp, vp, True, -first, True, impl)
        if attention is None:
            print(f"{impl:8} {'combine of 3 key parts':58} unsupported: {why[:150]}")
            return 0
        o = torch.empty(b, h, s, d, dtype=dtype, device="cuda")
        lse = torch.empty(b, h, s, device="cuda")
        attention(q, kp, vp, o, lse)
        outs.append(o)
        lses.append(lse)
    outs[1] = outs[1].float()  # parts may come in different types
    out = torch.empty(b, h, s, d, dtype=dtype, device="cuda")
    lse_out = torch.empty(b, h, s, device="cuda")
    n = len(outs)
    status = lib.lib.ein_attention_combine(
        n, (ctypes.c_void_p * n)(*[o.data_ptr() for o in outs]),
        (ctypes.c_char_p * n)(*[NAMES[o.dtype].encode() for o in outs]),
        (ctypes.c_void_p * n)(*[l.data_ptr() for l in lses]),
        b * h * s, d, out.data_ptr(), b"bf16", lse_out.data_ptr(),
        torch.cuda.current_stream().cuda_stream)
    if status:
        print(f"{impl:8} combine failed: {lib.error()}")
        return 1
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(q, k, v, True, 0)
    err_o, err_l = relative_error(out, ref_o), relative_error(lse_out, ref_lse)
    ok = err_o <= THRESHOLD[dtype] and err_l <= THRESHOLD[dtype]
    print(f"{impl:8} {'combine of 3 key parts (bf16, f32, bf16), causal 4096':58} "
          f"{err_o:9.2e} {err_l:9.2e}  {'ok' if ok else 'FAIL'}", flush=True)
    return 0 if ok else 1


def bench(lib, implementations, warmup, iters, lengths):
    rows = []
    for s in lengths:
        q, k, v = inputs(1, 32, 8, s, s, 128, torch.bfloat16, 7)
        flops = 4 * 32 * s * s * 128 / 2
        o = torch.empty_like(q)
        results = {}
        for name, backend in (("torch-cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("torch-flash", SDPBackend.FLASH_ATTENTION)):
            with sdpa_kernel([backend]):
                results[name] = timed(lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=True, enable_gqa=True), warmup, iters)
        for impl in implementations:
            attention, why = lib.create(q, k, v, True, 0, False, impl)
            if attention is None:
                print(f"S={s} ein-{impl}: unsupported: {why[:200]}")
                continue
            results[f"ein-{impl}"] = timed(lambda: attention(q, k, v, o, None),
                                           warmup, iters)
            print(f"S={s} ein-{impl} is {attention.name}")
        for name, ms in results.items():
            rows.append((s, name, ms, flops / ms / 1e9,
                         results["torch-cudnn"] / ms))
        del q, k, v, o
        torch.cuda.empty_cache()
    print(f"\n{'tokens':>7} {'implementation':14} {'ms':>9} {'TFLOP/s':>8} {'vs torch-cudnn':>15}")
    for s, name, ms, tflops, ratio in rows:
        print(f"{s:7d} {name:14} {ms:9.3f} {tflops:8.0f} {ratio:14.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="path to libein_attention.so")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--impl", default="cudnn,kernel")
    parser.add_argument("--lengths", default="8192,32768,131072")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(),
          torch.cuda.get_device_name(), flush=True)
    lib = Library(args.lib)
    implementations = args.impl.split(",")
    failures = 0
    if args.check:
        failures = check(lib, implementations)
        print(f"{failures} failed" if failures else "all checks passed")
    if args.bench:
        bench(lib, implementations, args.warmup, args.iters,
              [int(x) for x in args.lengths.split(",")])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
