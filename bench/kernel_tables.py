#!/usr/bin/env python3
"""The chip table's kernel-time grids: measure them on a GPU, emit them as C++.

  python3 bench/kernel_tables.py measure OUT.json [--heated]          # on the GPU machine
  python3 bench/kernel_tables.py measure-causal CAUSAL.json [--heated] # on the GPU machine
  python3 bench/kernel_tables.py probe-clock      # burst, heated, long: a few shapes
  python3 bench/kernel_tables.py emit IN.json CAUSAL.json > runtime/lib/chip_kernel_tables.inc

`measure` times, on one GPU in bf16:
  - gemms `a @ b` (a: M x K, b: K x N) for M, N, K on a grid of powers of two
    (64 .. 32768 for M, 64 .. 16384 for N and K);
  - non-causal attention through PyTorch's cuDNN SDPA (the library ein's CUDA
    backend calls), head dim 128, for B*H query heads (1 .. 128), query
    lengths and key lengths on powers of two (128 .. 16384).
Each time is the median GPU time per call of calls captured in one CUDA graph
(as a bundle replays its steps: no host dispatch between them). With
`--heated`, each shape is timed right after ~20 ms of large gemms (the first
after 5 s): at the clock a GPU running a block sustains under its power cap,
not the boost clock of short bursts from idle (`probe-clock` compares them). `emit` makes
the grids monotone (more work never takes less time), sets launch-bound
entries (within 25% of the smallest) to the smallest, and writes them as the
constexpr arrays runtime/lib/chip.cpp includes (ein::gemmSeconds and
ein::attentionSeconds interpolate them).
"""
import json
import sys
import time


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def time_fn(torch, fn, min_total_s=0.002, rounds=5, heat=None):
    """Median GPU seconds per call: `reps` calls captured in one CUDA graph
    (as a bundle replays its steps, without the host's per-call dispatch),
    the graph replayed `rounds` times. Falls back to back-to-back eager calls
    where capture fails (returned second: False). `heat`, when given, runs
    on the GPU right before the timed rounds (after the capture, which
    leaves the GPU idle): a Heater holds the clock where a busy GPU's power
    cap holds it."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
        enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) * 1e-3, 1e-6)
    reps = max(3, min(100, int(min_total_s / one)))
    samples = []
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
            fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(reps):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        if heat:
            heat()
        for _ in range(rounds):
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e-3 / reps)
        del graph
        return median(samples), True
    except RuntimeError:
        torch.cuda.synchronize()
    if heat:
        heat()
    for _ in range(rounds):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e-3 / reps)
    return median(samples), False


class Heater:
    """Large gemms back to back for about `seconds` (a CUDA graph of them
    replayed), enqueued before a timing so that the clock it times at is
    the one a GPU busy with a block's gemms sustains under its power cap
    (an H200 at 700 W: about 1.5 GHz against 1.98 idle), not the boost
    clock of an idle start. The first call heats for `first` seconds."""

    def __init__(self, torch, seconds=0.02, first=5.0, size=8192):
        self.torch = torch
        dev = torch.device("cuda")
        self.a = torch.randn(size, size, dtype=torch.bfloat16, device=dev)
        self.b = torch.randn(size, size, dtype=torch.bfloat16, device=dev)
        self.c = torch.empty(size, size, dtype=torch.bfloat16, device=dev)
        one, _ = time_fn(torch, lambda: torch.matmul(self.a, self.b,
                                                     out=self.c), rounds=1)
        self.graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.matmul(self.a, self.b, out=self.c)
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(self.graph):
            for _ in range(max(1, int(seconds / one))):
                torch.matmul(self.a, self.b, out=self.c)
        self.replays_first = max(1, int(first / seconds))
        self.started = False

    def __call__(self):
        for _ in range(1 if self.started else self.replays_first):
            self.graph.replay()
        self.started = True


def provenance(torch, heated):
    """Where and when a measurement ran: the keys every measured file
    starts with (emit prints them)."""
    return {"device": torch.cuda.get_device_name(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "torch": torch.__version__,
            "clock": "heated" if heated else "burst"}


GEMM_M = [64 << i for i in range(10)]  # 64 .. 32768
GEMM_NK = [64 << i for i in range(9)]  # 64 .. 16384
ATT_BH = [1, 4, 16, 64, 128]
ATT_LEN = [128 << i for i in range(8)]  # 128 .. 16384
HEAD_DIM = 128


def measure(path, heated=False):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    big_a = torch.randn(max(GEMM_M) * max(GEMM_NK), dtype=torch.bfloat16,
                        device=dev)
    big_b = torch.randn(max(GEMM_NK) * max(GEMM_NK), dtype=torch.bfloat16,
                        device=dev)
    out = torch.empty(max(GEMM_M) * max(GEMM_NK), dtype=torch.bfloat16,
                      device=dev)
    heat = Heater(torch) if heated else None
    t0 = time.time()
    eager = 0  # shapes timed without a CUDA graph
    gemm = []
    for m in GEMM_M:
        row = []
        for n in GEMM_NK:
            col = []
            for k in GEMM_NK:
                a = big_a[:m * k].view(m, k)
                b = big_b[:k * n].view(k, n)
                c = out[:m * n].view(m, n)
                t, graphed = time_fn(torch,
                                     lambda: torch.matmul(a, b, out=c),
                                     heat=heat)
                eager += not graphed
                col.append(t)
            row.append(col)
        gemm.append(row)
        print(f"gemm M={m} done ({time.time() - t0:.0f} s)", flush=True)
    del big_a, big_b, out
    torch.cuda.empty_cache()

    attention = []
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for bh in ATT_BH:
            row = []
            for q in ATT_LEN:
                col = []
                for k in ATT_LEN:
                    qt = torch.randn(1, bh, q, HEAD_DIM, dtype=torch.bfloat16,
                                     device=dev)
                    kt = torch.randn(1, bh, k, HEAD_DIM, dtype=torch.bfloat16,
                                     device=dev)
                    vt = torch.randn_like(kt)
                    t, graphed = time_fn(
                        torch,
                        lambda: F.scaled_dot_product_attention(qt, kt, vt),
                        heat=heat)
                    eager += not graphed
                    col.append(t)
                row.append(col)
            attention.append(row)
            print(f"attention BH={bh} done ({time.time() - t0:.0f} s)",
                  flush=True)
    result = {
        **provenance(torch, heated),
        "timed_eagerly": eager,
        "gemm": {"m": GEMM_M, "n": GEMM_NK, "k": GEMM_NK, "seconds": gemm},
        "attention": {"bh": ATT_BH, "q": ATT_LEN, "k": ATT_LEN,
                      "head_dim": HEAD_DIM, "seconds": attention},
    }
    with open(path, "w") as f:
        json.dump(result, f)
    print(f"{eager} shapes timed eagerly (capture failed)")
    # A short table: efficiency at a few shapes.
    peak = 790e12
    for (m, n, k) in [(64, 4096, 4096), (1024, 4096, 4096), (8192, 4096, 4096),
                      (8192, 512, 4096), (8192, 4096, 512), (8192, 128, 4096),
                      (16384, 16384, 16384)]:
        s = gemm[GEMM_M.index(m)][GEMM_NK.index(n)][GEMM_NK.index(k)]
        print(f"gemm {m}x{n}x{k}: {s * 1e6:.1f} us, "
              f"{2 * m * n * k / s / 1e12:.0f} TFLOP/s "
              f"({2 * m * n * k / s / peak:.0%} of 790)")
    for (bh, q, k) in [(32, 8192, 8192), (4, 8192, 8192), (32, 1024, 8192)]:
        if bh in ATT_BH:
            s = attention[ATT_BH.index(bh)][ATT_LEN.index(q)][ATT_LEN.index(k)]
            print(f"attention bh={bh} q={q} k={k}: {s * 1e6:.1f} us, "
                  f"{4 * bh * q * k * HEAD_DIM / s / 1e12:.0f} TFLOP/s")


def measure_causal(path, heated=False):
    """Causal attention against non-causal at square sizes (queries = keys),
    the same heads and lengths as the attention grid, in one run: cuDNN's
    causal kernel does half the pairs but not in half the time."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    dev = torch.device("cuda")
    heat = Heater(torch) if heated else None
    t0 = time.time()
    causal, full = [], []
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for bh in ATT_BH:
            crow, frow = [], []
            for n in ATT_LEN:
                qt = torch.randn(1, bh, n, HEAD_DIM, dtype=torch.bfloat16,
                                 device=dev)
                kt, vt = torch.randn_like(qt), torch.randn_like(qt)
                c, _ = time_fn(torch, lambda: F.scaled_dot_product_attention(
                    qt, kt, vt, is_causal=True), heat=heat)
                f, _ = time_fn(torch, lambda: F.scaled_dot_product_attention(
                    qt, kt, vt), heat=heat)
                crow.append(c)
                frow.append(f)
            causal.append(crow)
            full.append(frow)
            print(f"causal attention BH={bh} done ({time.time() - t0:.0f} s)",
                  flush=True)
    result = {
        **provenance(torch, heated),
        "bh": ATT_BH, "len": ATT_LEN, "head_dim": HEAD_DIM,
        "causal_seconds": causal, "full_seconds": full,
    }
    with open(path, "w") as f:
        json.dump(result, f)
    for i, bh in enumerate(ATT_BH):
        print(f"BH={bh}: causal / half of non-causal " + " ".join(
            f"{n}:{causal[i][j] / (0.5 * full[i][j]):.2f}"
            for j, n in enumerate(ATT_LEN)))


def probe_clock(_path=None):
    """A few gemm and attention shapes timed three ways: in short bursts
    from an idle GPU (`measure`), right after the Heater (`measure
    --heated`), and in long runs of the shape alone after the Heater (the
    clock the shape itself sustains)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = torch.device("cuda")
    shapes = [(16384, 1792, 4096), (16384, 4096, 1792), (2048, 14336, 4096),
              (16384, 4096, 4096), (8192, 4096, 4096), (4096, 4096, 4096),
              (1024, 4096, 4096), (256, 4096, 4096), (1024, 1024, 1024)]
    cases = []
    for (m, n, k) in shapes:
        a = torch.randn(m, k, dtype=torch.bfloat16, device=dev)
        b = torch.randn(k, n, dtype=torch.bfloat16, device=dev)
        c = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
        cases.append((f"gemm {m}x{n}x{k}",
                      lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)))
    for (bh, n, causal) in [(32, 2048, True), (32, 2048, False),
                            (4, 2048, True), (32, 8192, True)]:
        q = torch.randn(1, bh, n, HEAD_DIM, dtype=torch.bfloat16, device=dev)
        cases.append((f"attention {bh}x{n}{' causal' if causal else ''}",
                      lambda q=q, causal=causal:
                      F.scaled_dot_product_attention(q, q, q,
                                                     is_causal=causal)))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        time.sleep(3)  # an idle start
        burst = [time_fn(torch, fn)[0] for _, fn in cases]
        heat = Heater(torch)
        heated = [time_fn(torch, fn, heat=heat)[0] for _, fn in cases]
        long = [time_fn(torch, fn, min_total_s=0.3, heat=heat)[0]
                for _, fn in cases]
    print(f"{'shape':28} {'burst us':>9} {'heated':>9} {'long':>9} "
          f"{'heated/burst':>12} {'long/burst':>10}")
    for (name, _), b, h, l in zip(cases, burst, heated, long):
        print(f"{name:28} {b * 1e6:9.1f} {h * 1e6:9.1f} {l * 1e6:9.1f} "
              f"{h / b:12.3f} {l / b:10.3f}")


def causal_ratios(r):
    """Per (heads, length): the causal kernel's time above the launch floor
    over half the non-causal one's, between 1 (half the pairs in half the
    time) and 2 (no faster than all of them); 1 where the non-causal kernel
    is launch-bound (within 25% of the floor, where the grid's time is the
    floor anyway)."""
    floor = min(min(row) for row in r["full_seconds"])
    ratios = []
    for crow, frow in zip(r["causal_seconds"], r["full_seconds"]):
        ratios.append([
            1.0 if f < 1.25 * floor else
            min(2.0, max(1.0, (c - floor) / (0.5 * (f - floor))))
            for c, f in zip(crow, frow)])
    return ratios


def tidy(cube, floor_band=1.25):
    """More work never takes less time: each entry raised to the largest
    entry at smaller or equal sizes along every axis; and entries within
    `floor_band` of the smallest (launch-bound kernels, whose differences
    are noise) set to it, so that blocks too small to matter cost the same."""
    a, b, c = len(cube), len(cube[0]), len(cube[0][0])
    t = [[[cube[i][j][k] for k in range(c)] for j in range(b)]
         for i in range(a)]
    for i in range(a):
        for j in range(b):
            for k in range(c):
                for (di, dj, dk) in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
                    if i >= di and j >= dj and k >= dk:
                        t[i][j][k] = max(t[i][j][k], t[i - di][j - dj][k - dk])
    floor = t[0][0][0]
    return [[[floor if x < floor * floor_band else x for x in row]
             for row in plane] for plane in t]


def emit(path, causal_path=None):
    with open(path) as f:
        r = json.load(f)

    def array(name, values):
        return (f"constexpr int64_t {name}[] = {{"
                + ", ".join(str(v) for v in values) + "};\n")

    def grid(name, cube):
        flat = [x for plane in cube for row in plane for x in row]
        body = ",\n    ".join(
            ", ".join(f"{x * 1e6:.2f}" for x in flat[i:i + 8])
            for i in range(0, len(flat), 8))
        return f"constexpr double {name}[] = {{\n    {body}}};\n"

    g, a = r["gemm"], r["attention"]
    g["seconds"], a["seconds"] = tidy(g["seconds"]), tidy(a["seconds"])
    print("// Generated by bench/kernel_tables.py emit from measurements on "
          f"{r['device']}, {r['date']}, PyTorch {r['torch']}, "
          f"{r.get('clock', 'burst')} clock.")
    print("// Microseconds per call, bf16; do not edit by hand.")
    print(array("kGemmM", g["m"]) + array("kGemmN", g["n"]) +
          array("kGemmK", g["k"]) + grid("kGemmMicros", g["seconds"]))
    print(f"constexpr int64_t kAttentionHeadDim = {a['head_dim']};")
    print(array("kAttentionHeads", a["bh"]) + array("kAttentionQ", a["q"]) +
          array("kAttentionK", a["k"]) +
          grid("kAttentionMicros", a["seconds"]))
    with open(causal_path) as f:
        c = json.load(f)
    assert c["bh"] == a["bh"], "causal grid's heads differ from the grid's"
    ratios = causal_ratios(c)
    print(f"// Causal over half of non-causal, per heads and length "
          f"(queries = keys), measured on {c['device']}, {c['date']}.")
    print(array("kAttentionCausalLen", c["len"]) +
          "constexpr double kAttentionCausalRatio[] = {\n    " +
          ",\n    ".join(", ".join(f"{x:.3f}" for x in row)
                          for row in ratios) + "};")


if __name__ == "__main__":
    commands = {"measure": measure, "measure-causal": measure_causal}
    heated = "--heated" in sys.argv[3:]
    if sys.argv[1:2] == ["probe-clock"] and len(sys.argv) == 2:
        probe_clock()
    elif (len(sys.argv) in (3, 4) and sys.argv[1] in commands
          and sys.argv[3:] in ([], ["--heated"])):
        commands[sys.argv[1]](sys.argv[2], heated)
    elif len(sys.argv) == 4 and sys.argv[1] == "emit":
        emit(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
