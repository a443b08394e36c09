#!/usr/bin/env python3
"""Predicts, on the build machine, what the benchmark workloads will take on
a GPU machine not yet measured (issue #15: eight H200s), so the run there can
be compared with a prediction committed before it.

    python3 bench/predict.py [--devices 8] [--topology nvswitch] [--calibrate RESULTS.md]

For each LLaMA workload and matrix chain it compiles the search's plan with
ein-compile --target=cuda for 1, 2 and N GPUs (--tie-layout for the blocks,
as the benchmark does), reads each plan's --explain JSON (the simulator's
step, the proxy's bytes, the memory per GPU) and prints one table. The
simulator's absolute times run high (about 1.6x-2x on 2 H200s, bench/results/
2026-11-30-ablation-h200x2.md), so with --calibrate the 2-GPU measured
times of a results file ("| workload | ... |" rows, ein's 2-GPU column) scale
the N-GPU prediction: predicted = simulated(N) x measured(2) / simulated(2).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMA = ["w1-l3-8b-b1-s8k", "w2-l3-8b-b8-s2k", "w3-l2-7b-b4-s4k",
         "w4-l3-70b-b1-s4k", "w5-l3-8b-b32-s512", "long-l3-8b-s128k"]
CHAINS = ["A-square-chain", "B-skinny-chain", "C-bushy", "D-batched", "E-big-matmul"]


def compile_plan(source, devices, topology, tie, work):
    out = os.path.join(work, "bundle")
    explain = os.path.join(work, "plan.json")
    cmd = [os.path.join(ROOT, "build/bin/ein-compile"), source, "-o", out,
           f"--devices={devices}", "--target=cuda", f"--explain={explain}"]
    if devices > 1:
        cmd.append(f"--topology={topology}")
    if tie:
        cmd.append("--tie-layout")
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode:
        sys.exit(f"predict.py: {' '.join(cmd)} failed:\n{result.stderr}")
    plan = json.load(open(explain))
    subprocess.run(["rm", "-rf", out])
    return plan, seconds


def phrase(kind, plan_path):
    return subprocess.run([sys.executable, os.path.join(ROOT, "bench/plan_phrase.py"),
                           kind, plan_path], capture_output=True, text=True).stdout.strip()


def measured_two_gpu(path):
    """ein's 2-GPU ms per workload from a results table (the 5th column of the
    block table, the 6th of the chain table)."""
    found = {}
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 8 or not re.match(r"^(w\d-|long-|[A-E]-)", cells[1]):
            continue
        column = 5 if cells[1][0] in "wl" else 6
        try:
            found[cells[1]] = float(cells[column])
        except ValueError:
            pass
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--topology", default="nvswitch")
    ap.add_argument("--calibrate", action="append", default=[])
    a = ap.parse_args()
    measured = {}
    for path in a.calibrate:
        measured.update(measured_two_gpu(path))
    work = tempfile.mkdtemp(prefix="ein-predict-")
    rows = []
    for kind, names in (("llama", LLAMA), ("chain", CHAINS)):
        for name in names:
            source = os.path.join(work, name + ".mlir")
            gen = (["python3", os.path.join(ROOT, "examples/gen_llama_block.py"),
                    "--workload", name, "--dtype", "bf16"] if kind == "llama"
                   else ["python3", os.path.join(ROOT, "bench/gen_matrix_chain.py"), name])
            with open(source, "w") as f:
                subprocess.run(gen, stdout=f, check=True)
            sims = {}
            for d in (1, 2, a.devices):
                plan, seconds = compile_plan(source, d, a.topology, kind == "llama", work)
                sims[d] = plan
                if d == a.devices:
                    json.dump(plan, open(os.path.join(work, "last.json"), "w"))
                    words = phrase(kind, os.path.join(work, "last.json"))
                    plan_seconds = seconds
            s1, s2, sn = (sims[d]["simulated_ms"] for d in (1, 2, a.devices))
            memory = max(sims[a.devices]["memory_bytes"]) / 2**20
            m2 = measured.get(name)
            predicted = f"{sn * m2 / s2:.2f}" if m2 else "-"
            rows.append((name, s1, s2, sn, predicted, memory, plan_seconds, words))
    print(f"| workload | simulated 1 GPU | 2 GPUs | {a.devices} GPUs | predicted {a.devices} GPUs (ms) | memory per GPU (MiB) | compile s | plan on {a.devices} GPUs |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s1, s2, sn, predicted, memory, seconds, words in rows:
        print(f"| {name} | {s1:.3f} | {s2:.3f} | {sn:.3f} | {predicted} | {memory:.0f} | {seconds:.1f} | {words} |")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
