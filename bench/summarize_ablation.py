#!/usr/bin/env python3
"""The table of bench/run_ablation.sh: per workload the optimal plan's time,
the median random plan's, naive against synthesized exchanges, and the
simulator's prediction (from each plan's --explain JSON) against the
measured time (Pearson's r, and Spearman's rho: does the simulator rank
the plans as the GPUs do?).

  python3 bench/summarize_ablation.py DIR TIMES.txt
  python3 bench/summarize_ablation.py --table RESULTS.md

The second form recomputes the statistics from the plan rows of a results
file ("plan measured simulated proxy", as the first form prints them)."""
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


def ranks(xs):
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    return pearson(ranks(xs), ranks(ys))


def plan_rows(directory, times):
    """(plan, measured ms, simulated ms, proxy GB) per timed plan."""
    rows = []
    for line in open(times):
        name, ms = line.split()
        if ms == "fail":
            continue
        path = os.path.join(directory, name + ".json")
        explain = json.load(open(path)) if os.path.exists(path) else {}
        sim = explain.get("simulated_ms", float("nan"))
        proxy = explain.get("total_cost_bytes", float("nan")) / 1e9
        rows.append((name, float(ms), sim, proxy))
    return rows


def table_rows(path):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[0].rsplit("-", 1)[-1].startswith(("optimal", "naive", "random")):
            try:
                rows.append((f[0], float(f[1]), float(f[2]), float(f[3])))
            except ValueError:
                pass
    return rows


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        every = table_rows(sys.argv[2])
    elif len(sys.argv) == 3:
        every = plan_rows(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: summarize_ablation.py DIR TIMES.txt | --table RESULTS.md")
    measured = {name: ms for name, ms, _, _ in every}
    workloads = sorted({n.rsplit("-", 1)[0] for n in measured})
    print(f"{'plan':32} {'measured ms':>12} {'simulated ms':>13} {'proxy GB':>9}")
    for w in workloads:
        rows = sorted(r for r in every if r[0].rsplit("-", 1)[0] == w)
        for name, ms, sim, proxy in rows:
            print(f"{name:32} {ms:12.3f} {sim:13.3f} {proxy:9.2f}")
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
            proxies = [p for _, _, _, p in rows]
            times = [m for _, m, _, _ in rows]
            print(f"{w}: simulator against measured over {len(pairs)} plans: "
                  f"Pearson r = {pearson(sims, meas):.2f}, Spearman rho = "
                  f"{spearman(sims, meas):.2f}; proxy bytes against measured "
                  f"r = {pearson(proxies, times):.2f}, rho = "
                  f"{spearman(proxies, times):.2f}")


if __name__ == "__main__":
    main()
