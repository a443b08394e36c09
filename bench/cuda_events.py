"""Timing on the GPU as every benchmark here does (bench/WORKLOADS.md):
CUDA events around each call, the median of `iters` after `warmup` calls."""
import torch


def timed(fn, warmup, iters, before=None):
    """The median time of fn() in milliseconds; with `before`, each call of
    fn() follows one of before(), untimed (say, a gemm that warms the GPU)."""
    for _ in range(warmup):
        if before:
            before()
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        if before:
            before()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]
