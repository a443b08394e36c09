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


def graphed(fn, warmup=10, iters=50):
    """The median time in milliseconds of one replay of a CUDA graph of
    fn(), as the peers in bench/peers time PyTorch (launch costs out of the
    comparison, as they are out of ein's one-graph bundle); None where
    capture fails. fn runs three times on a side stream first (what
    capture needs: lazily made state, torch.compile's compilation)."""
    with torch.no_grad():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
        except Exception:
            return None
    return timed(graph.replay, warmup, iters)
