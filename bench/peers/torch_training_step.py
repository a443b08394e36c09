#!/usr/bin/env python3
"""The training step PyTorch users run, for issue 59's goals: a LLaMA block
(torch_llama_block.py's Block, its weights made trainable) and a model of
LAYERS such blocks at 8B widths, bf16 compute with f32 master weights and
f32 AdamW moments (torch.autocast; AdamW fused=True), an MSE loss against a
target of the hidden size. Modes: `eager`, `compile` (the loss function,
forward and backward, through torch.compile, `--mode` default or
max-autotune-no-cudagraphs). One GPU.

Run:  python3 torch_training_step.py [--workloads w2-l3-8b-b8-s2k] [--layers 1,4]
          [--modes eager,compile] [--mode default] [--iters 10] [--warmup 3]
Prints one line per (workload, layers, mode): ms per step (the median of
--iters, synchronised on the host) and the peak memory torch saw.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import torch_llama_block as peer  # noqa: E402


class Model(torch.nn.Module):
    """LAYERS of peer.Block's math with nn.Parameters (f32 masters)."""

    def __init__(self, H, nh, nkv, ffn, layers, dev):
        super().__init__()
        self.blocks = []
        for layer in range(layers):
            block = peer.Block(H, nh, nkv, ffn, 1, layer, False, dev,
                               torch.float32)
            for name in ("wq", "wk", "wv", "wo", "wg", "wu", "wd", "n1",
                         "n2"):
                p = torch.nn.Parameter(getattr(block, name))
                self.register_parameter("l%d_%s" % (layer, name), p)
                setattr(block, name, p)
            self.blocks.append(block)

    def forward(self, x, cos, sin):
        for block in self.blocks:
            x = block(x, cos, sin)
        return x


def step_fn(model, optimizer, compiled, mode):
    def loss_of(x, y, cos, sin):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.mse_loss(model(x, cos, sin).float(), y)
    if compiled:
        loss_of = torch.compile(loss_of, mode=mode)

    def step(x, y, cos, sin):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(x, y, cos, sin)
        loss.backward()
        optimizer.step()
        return loss
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="w2-l3-8b-b8-s2k")
    ap.add_argument("--layers", default="1,4")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    dev = torch.device("cuda", 0)
    for name in a.workloads.split(","):
        H, nh, nkv, ffn, B, S = peer.WORKLOADS[name]
        for layers in map(int, a.layers.split(",")):
            for mode in a.modes.split(","):
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(dev)
                model = Model(H, nh, nkv, ffn, layers, dev)
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4,
                                              weight_decay=0.01, fused=True)
                g = torch.Generator(device=dev).manual_seed(7)
                x = torch.randn(B, S, H, device=dev, generator=g,
                                dtype=torch.bfloat16)
                y = torch.randn(B, S, H, device=dev, generator=g)
                # RoPE's tables as torch_llama_block.py makes them.
                hd = H // nh
                pos = torch.arange(S, device=dev, dtype=torch.float32)
                inv = 10000.0 ** (-torch.arange(0, hd // 2, device=dev,
                                                dtype=torch.float32)
                                  / (hd // 2))
                ang = pos[:, None] * inv[None]
                cos = ang.cos().to(torch.bfloat16)[None, :, None, :]
                sin = ang.sin().to(torch.bfloat16)[None, :, None, :]
                step = step_fn(model, optimizer, mode == "compile", a.mode)
                began = time.time()
                for _ in range(a.warmup):
                    step(x, y, cos, sin)
                torch.cuda.synchronize()
                warm_s = time.time() - began
                times = []
                for _ in range(a.iters):
                    t = time.perf_counter()
                    step(x, y, cos, sin)
                    torch.cuda.synchronize()
                    times.append((time.perf_counter() - t) * 1e3)
                peak = torch.cuda.max_memory_allocated(dev) / 2 ** 30
                print("%s layers=%d %s%s %.3f ms peak %.2f GiB (warm-up "
                      "%.0f s)" % (name, layers, mode,
                                   "" if mode == "eager" else "-" + a.mode,
                                   statistics.median(times), peak, warm_s),
                      flush=True)
                del model, optimizer, step


if __name__ == "__main__":
    main()
