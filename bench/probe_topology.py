#!/usr/bin/env python3
"""Measures a GPU machine's wiring and writes a topology JSON (docs/physical.md).

  python3 bench/probe_topology.py --out machine.json [--name NAME]

Runs on the GPU machine with PyTorch. For every ordered pair of GPUs it times
a large copy (bandwidth) and a small one (latency) with CUDA events; for
every GPU it times copies to all others at once (egress) and from all others
at once (ingress). The JSON models each GPU's egress and ingress as links
and every pair as a link of its own, so a transfer from i to j crosses
gpuI.out, gpuI->gpuJ and gpuJ.in: a switch (per-GPU caps) and point-to-point
wiring (per-pair links) are both described by what was measured.

Copies go through torch's cross-device copy_ (peer access where the GPUs have
it). Each figure is the median of --iters timed copies after warm-ups, on the
host clock with every GPU synchronized around it; the latency is a small
copy's time less that of synchronizing alone.
"""

import argparse
import json
import statistics
import time

import torch


def timed(work, iters):
    """Median milliseconds of `work()`, host clock, every GPU synchronized
    before and after (copies may run on any device's stream)."""
    n = torch.cuda.device_count()
    times = []
    for i in range(iters + 3):
        for d in range(n):
            torch.cuda.synchronize(d)
        start = time.perf_counter()
        work()
        for d in range(n):
            torch.cuda.synchronize(d)
        if i >= 3:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", default="measured")
    parser.add_argument("--big", type=int, default=256 << 20,
                        help="bytes of the bandwidth copies")
    parser.add_argument("--small", type=int, default=4096,
                        help="bytes of the latency copies")
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()

    n = torch.cuda.device_count()
    if n < 2:
        raise SystemExit("probe_topology: needs at least 2 GPUs, found %d" % n)
    big = [torch.empty(args.big, dtype=torch.uint8, device=d) for d in range(n)]
    sink = [[torch.empty(args.big, dtype=torch.uint8, device=d)
             for _ in range(n)] for d in range(n)]
    small = [torch.empty(args.small, dtype=torch.uint8, device=d)
             for d in range(n)]
    small_sink = [torch.empty(args.small, dtype=torch.uint8, device=d)
                  for d in range(n)]

    baseline = timed(lambda: None, args.iters)
    pair_gbps, latency_us = {}, {}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            ms = timed(lambda: sink[j][i].copy_(big[i], non_blocking=True),
                       args.iters)
            pair_gbps[(i, j)] = args.big / ms / 1e6
            ms = timed(lambda: small_sink[j].copy_(small[i], non_blocking=True),
                       args.iters)
            latency_us[(i, j)] = max(0.0, ms - baseline) * 1e3
            print("gpu%d -> gpu%d: %.1f GB/s, %.1f us for %d bytes" %
                  (i, j, pair_gbps[(i, j)], latency_us[(i, j)], args.small))

    egress, ingress = [], []
    for i in range(n):
        def send_all():
            for j in range(n):
                if j != i:
                    with torch.cuda.device(j):
                        sink[j][i].copy_(big[i], non_blocking=True)

        def receive_all():
            for j in range(n):
                if j != i:
                    with torch.cuda.device(i):
                        sink[i][j].copy_(big[j], non_blocking=True)
        egress.append(args.big * (n - 1) / timed(send_all, args.iters) / 1e6)
        ingress.append(args.big * (n - 1) / timed(receive_all, args.iters)
                       / 1e6)
        print("gpu%d: egress %.1f GB/s, ingress %.1f GB/s to and from all" %
              (i, egress[i], ingress[i]))

    links, routes = [], []
    for i in range(n):
        links.append({"name": "gpu%d.out" % i,
                      "bandwidth_gb_per_s": round(egress[i], 1)})
        links.append({"name": "gpu%d.in" % i,
                      "bandwidth_gb_per_s": round(ingress[i], 1)})
    for (i, j), gbps in sorted(pair_gbps.items()):
        links.append({"name": "gpu%d->gpu%d" % (i, j),
                      "bandwidth_gb_per_s": round(gbps, 1)})
        routes.append({"from": i, "to": j,
                       "links": ["gpu%d.out" % i, "gpu%d->gpu%d" % (i, j),
                                 "gpu%d.in" % j],
                       "latency_us": round(latency_us[(i, j)], 1)})
    topology = {"name": args.name, "devices": n,
                "measured_with": "bench/probe_topology.py, torch %s, %s" %
                (torch.__version__, torch.cuda.get_device_name(0)),
                "links": links, "routes": routes}
    with open(args.out, "w") as f:
        json.dump(topology, f, indent=2)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
