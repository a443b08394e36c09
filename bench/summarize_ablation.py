#!/usr/bin/env python3
"""The table of bench/run_ablation.sh: per workload the optimal plan's time,
the median random plan's, naive against synthesized exchanges, and the
simulator's prediction (from each plan's --explain JSON) against the
measured time.

  python3 bench/summarize_ablation.py DIR TIMES.txt"""
import json
import math
import os
import statistics
import sys


def pearson(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return sxy / (sx * sy) if sx and sy else float("nan")


def main():
    directory, times = sys.argv[1], sys.argv[2]
    measured = {}
    for line in open(times):
        name, ms = line.split()
        if ms != "fail":
            measured[name] = float(ms)
    workloads = sorted({n.rsplit("-", 1)[0] for n in measured})
    print(f"{'plan':32} {'measured ms':>12} {'simulated ms':>13} {'proxy GB':>9}")
    for w in workloads:
        rows = []
        for name in sorted(measured):
            if name.rsplit("-", 1)[0] != w:
                continue
            path = os.path.join(directory, name + ".json")
            explain = json.load(open(path)) if os.path.exists(path) else {}
            sim = explain.get("simulated_ms", float("nan"))
            proxy = explain.get("total_cost_bytes", float("nan")) / 1e9
            rows.append((name, measured[name], sim, proxy))
            print(f"{name:32} {measured[name]:12.3f} {sim:13.3f} {proxy:9.2f}")
        optimal = measured.get(w + "-optimal")
        randoms = [ms for n, ms, _, _ in rows if n.startswith(w + "-random")]
        naive = measured.get(w + "-naive")
        if optimal and randoms:
            med = statistics.median(randoms)
            print(f"{w}: optimal {optimal:.3f} ms, median of {len(randoms)} "
                  f"random plans {med:.3f} ms = {med / optimal:.2f}x slower "
                  f"(range {min(randoms) / optimal:.2f}x-{max(randoms) / optimal:.2f}x)")
        if optimal and naive:
            print(f"{w}: naive exchanges {naive:.3f} ms against synthesized "
                  f"{optimal:.3f} ms ({naive / optimal:.3f}x)")
        pairs = [(s, m) for _, m, s, _ in rows if not math.isnan(s)]
        if len(pairs) >= 3:
            sims, meas = zip(*pairs)
            print(f"{w}: simulator against measured over {len(pairs)} plans: "
                  f"Pearson r = {pearson(sims, meas):.2f}; proxy bytes "
                  f"against measured r = "
                  f"{pearson([p for _, _, _, p in rows], [m for _, m, _, _ in rows]):.2f}")


if __name__ == "__main__":
    main()
