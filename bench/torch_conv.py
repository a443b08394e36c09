#!/usr/bin/env python3
"""The peer of bench/gen_conv_bench.py's convolutions: F.conv2d (cuDNN) on
the same shapes in bf16, channels last (nhwc) and contiguous (nchw), timed
eagerly and replayed in a CUDA graph (CUDA events, median of 50 after 10;
bench/cuda_events.py).

    python3 bench/torch_conv.py [N H W C F K]
"""
import sys

import torch
import torch.nn.functional as F

from cuda_events import timed

n, h, w, c, f, k = [int(v) for v in sys.argv[1:]] or [32, 56, 56, 64, 64, 3]
torch.backends.cudnn.benchmark = True
for layout in ("nhwc", "nchw"):
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.bfloat16)
    x = x.contiguous(memory_format=fmt)
    wt = torch.randn(f, c, k, k, device="cuda", dtype=torch.bfloat16)
    wt = wt.contiguous(memory_format=fmt)

    def run():
        return F.conv2d(x, wt, padding=k // 2)

    eager = timed(run, 10, 50)
    run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        run()
    replay = timed(graph.replay, 10, 50)
    flops = 2.0 * n * f * h * w * c * k * k
    print("torch conv2d %s eager_ms=%.4f graph_ms=%.4f (%.0f TFLOP/s graph)"
          % (layout, eager, replay, flops / replay / 1e9))
