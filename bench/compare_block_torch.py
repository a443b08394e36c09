#!/usr/bin/env python3
"""ein's LLaMA block against the PyTorch peer's block on identical weights and
inputs (GPU machine; the CUDA code generation issue's large-shape check).

The peer's Block (bench/peers/torch_llama_block.py, unchanged) makes its
weights and input from its own seeds; they are written as .npy (bf16 as raw
<u2 payloads) in the order of the bundle's arguments (x, norm1, wq, wk, wv,
wo, norm2, wg, wu, wd, rope; examples/gen_llama_block.py), with the RoPE
table the peer's cos/sin make: rope[0, 0] = rope[1, 1] = cos, rope[0, 1] =
-sin, rope[1, 0] = sin. ein-run runs the bundle on them; the result is
compared with the peer's bf16 block and with the same block in float32 (the
same bf16 weights widened): max|a - b| / max(1, max|b|).

  compare_block_torch.py EIN_RUN BUNDLE WORKLOAD [--seed S] [--dir TMP]

Prints one line: workload, ein vs torch-f32, torch-bf16 vs torch-f32, ein vs
torch-bf16; exits 1 if ein's error against float32 exceeds bf16's threshold
(2e-2) or is more than 2x the peer's own.
"""
import argparse
import importlib.util
import os
import subprocess
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "peer", os.path.join(here, "peers", "torch_llama_block.py"))
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)


def save_bf16(path, t):
    np.save(path, t.contiguous().view(torch.int16).cpu().numpy().view(np.uint16))


def load_bf16(path):
    raw = np.load(path)
    return torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16)


def rel_err(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / max(1.0, b.abs().max().item())).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ein_run")
    ap.add_argument("bundle")
    ap.add_argument("workload", choices=sorted(peer.WORKLOADS))
    ap.add_argument("--dir", default="/tmp/compare-block")
    a = ap.parse_args()
    H, nh, nkv, ffn, B, S = peer.WORKLOADS[a.workload]
    dev = torch.device("cuda", 0)
    dt = torch.bfloat16
    torch.manual_seed(0)
    blk = peer.Block(H, nh, nkv, ffn, 1, 0, False, dev, dt)
    x = torch.randn(B, S, H, device=dev, dtype=dt)
    pos = torch.arange(S, device=dev, dtype=torch.float32)
    inv = 10000.0 ** (-torch.arange(0, blk.hd // 2, device=dev, dtype=torch.float32) / (blk.hd // 2))
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos().to(dt), ang.sin().to(dt)
    with torch.no_grad():
        y16 = blk(x, cos[None, :, None, :], sin[None, :, None, :])
        # The same block in float32: the bf16 weights and input widened.
        f32 = peer.Block.__new__(peer.Block)
        f32.__dict__.update({k: (v.float() if torch.is_tensor(v) else v) for k, v in blk.__dict__.items()})
        y32 = f32(x.float(), cos.float()[None, :, None, :], sin.float()[None, :, None, :])
    rope = torch.stack([torch.stack([cos, -sin]), torch.stack([sin, cos])])  # [2, 2, S, d/2]
    args = [x, blk.n1, blk.wq, blk.wk, blk.wv, blk.wo, blk.n2, blk.wg, blk.wu, blk.wd, rope]
    os.makedirs(a.dir, exist_ok=True)
    paths = []
    for i, t in enumerate(args):
        p = os.path.join(a.dir, f"arg{i}.npy")
        save_bf16(p, t)
        paths.append(p)
    out = os.path.join(a.dir, "ein.npy")
    subprocess.run([a.ein_run, a.bundle, "--inputs=" + ",".join(paths), "--outputs=" + out],
                   check=True, stdout=subprocess.DEVNULL)
    ein = load_bf16(out).to(dev)
    e32, t32, et = rel_err(ein, y32), rel_err(y16, y32), rel_err(ein, y16)
    print(f"{a.workload} ein_vs_torch_f32={e32:.3g} torch_bf16_vs_f32={t32:.3g} "
          f"ein_vs_torch_bf16={et:.3g}", flush=True)
    return 0 if e32 <= 2e-2 and e32 <= 2 * t32 else 1


if __name__ == "__main__":
    sys.exit(main())
