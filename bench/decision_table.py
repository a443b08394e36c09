#!/usr/bin/env python3
"""Across slow links, intra-op or pipelined, and against the hand plans?

For each LLaMA workload (one block, bf16) on K nodes of 8 GPUs, the
simulated step (ein-decompose's explanation, synthesized exchanges, the
nodes=K,gpus=8 topology) of:
  ein        the optimal strategy (hierarchical search), and its best priced
             pipeline (stages of consecutive ops on node groups, each stage
             cut by the search); and with weights-replicable=false (every
             weight byte moved is charged: a model too large to copy);
  megatron   Megatron within and across (every GPU one tensor-parallel
             group), and its best pipeline: Megatron within a node's stage,
             pipelined across nodes (the usual hand plan for one model over
             several servers);
  megatron-dp  Megatron within each node, data parallel across nodes.
Bytes between nodes per plan. Runs on the build machine.

  python3 bench/decision_table.py [--nodes 2,4] [--out FILE.md]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["w1-l3-8b-b1-s8k", "w2-l3-8b-b8-s2k", "w3-l2-7b-b4-s4k",
             "w4-l3-70b-b1-s4k", "w5-l3-8b-b32-s512"]


def explain(opt, program, nodes, strategy, tmp, extra=""):
    out = os.path.join(tmp, "e.json")
    proc = subprocess.run(
        [opt, program, "--ein-attach-target=devices=%d topology=nodes=%d,gpus=8"
         % (8 * nodes, nodes),
         "--ein-decompose=allow-inexact=true strategy=%s explain=%s %s"
         % (strategy, out, extra), "-o", os.devnull],
        capture_output=True, text=True)
    if proc.returncode != 0:
        line = next((l for l in proc.stderr.splitlines() if "error" in l), "")
        return {"error": line.split("error:", 1)[-1].strip()[:60]}
    with open(out) as f:
        d = json.load(f)
    best = None
    for p in d.get("pipeline", []):
        if p.get("feasible") and p.get("stages", 1) > 1 and \
                (best is None or p["simulated_ms"] < best["simulated_ms"]):
            best = p
    return {"ms": d["simulated_ms"], "between": d.get("bytes_between_nodes", 0),
            "pipe": best}


def cell(r, key="ms"):
    if "error" in r:
        return "refused"
    return "%.3f" % r[key]


def mib(b):
    return "%.0f MiB" % (b / 2**20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="2,4")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    opt = os.path.join(ROOT, "build", "bin", "ein-opt")
    lines = ["| workload | nodes x 8 | ein | ein pipelined | ein, weights not replicated | megatron | megatron pipelined across nodes | megatron-dp | best |",
             "|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for w in a.workloads.split(","):
            program = os.path.join(tmp, w + ".mlir")
            with open(program, "w") as f:
                subprocess.run([sys.executable, os.path.join(ROOT, "examples", "gen_llama_block.py"),
                                "--workload", w, "--dtype", "bf16"], stdout=f, check=True)
            for k in [int(n) for n in a.nodes.split(",")]:
                r = {s: explain(opt, program, k, s, tmp)
                     for s in ("optimal", "megatron", "megatron-dp")}
                # Weights not replicated (a model too large to copy onto
                # every GPU): the search charges every weight byte it moves.
                r["sharded"] = explain(opt, program, k, "optimal", tmp,
                                       "weights-replicable=false")
                def pipe(x):
                    p = x.get("pipe")
                    return "%.3f (%dx%d)" % (p["simulated_ms"], p["stages"], p["micro_batches"]) if p else "-"
                options = {"ein": r["optimal"].get("ms"),
                           "ein weights sharded": r["sharded"].get("ms"),
                           "ein pipelined": (r["optimal"].get("pipe") or {}).get("simulated_ms"),
                           "megatron": r["megatron"].get("ms"),
                           "megatron pipelined": (r["megatron"].get("pipe") or {}).get("simulated_ms"),
                           "megatron-dp": r["megatron-dp"].get("ms")}
                best = min((v, k2) for k2, v in options.items() if v is not None)
                def with_bytes(x):
                    return cell(x) if "error" in x else "%s (%s)" % (cell(x), mib(x["between"]))
                lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                    w, k, with_bytes(r["optimal"]), pipe(r["optimal"]),
                    with_bytes(r["sharded"]),
                    with_bytes(r["megatron"]), pipe(r["megatron"]),
                    with_bytes(r["megatron-dp"]), best[1]))
                print(lines[-1], flush=True)
    text = ("# Intra-op, pipelined and hand plans across nodes (simulated)\n\n"
            "Measured %s on the build machine: `python3 bench/decision_table.py`. "
            "Simulated step in ms (bytes between nodes); pipelines as "
            "stages x micro-batches.\n\n" % datetime.date.today().isoformat()
            + "\n".join(lines) + "\n")
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
