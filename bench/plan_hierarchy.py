#!/usr/bin/env python3
"""Planning for several nodes: the hierarchical search against the flat one
(build machine; docs/distributed.md).

For each LLaMA workload of WORKLOADS.md (examples/gen_llama_block.py) and
each topology nodes=K,gpus=G, runs ein-opt's ein-decompose twice per mode,
hierarchical=true and false (allow-inexact, so a flat search that hits the
state cap still answers): once alone, timed (the search and nothing else),
and once with explain=FILE for the plan's proxy cost (total_cost_bytes) and
its simulated step. Prints a Markdown table; a run past --timeout seconds is
reported as such. The proxy is the search's plan's (explain's arbitration
prices every candidate as the search does); the simulated step is the plan
ein-decompose kept, marked "(kept: ...)" where the simulator preferred
another candidate to the search's.

usage: plan_hierarchy.py BUILD_DIR [--topologies nodes=2,gpus=4 ...]
                                   [--workloads w1-l3-8b-b1-s8k ...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOADS = ["w1-l3-8b-b1-s8k", "w2-l3-8b-b8-s2k", "w3-l2-7b-b4-s4k",
             "w4-l3-70b-b1-s4k", "w5-l3-8b-b32-s512"]
TOPOLOGIES = ["nodes=2,gpus=4", "nodes=2,gpus=8", "nodes=4,gpus=8",
              "nodes=8,gpus=8"]


def devices(topology):
    k, g = re.match(r"nodes=(\d+),gpus=(\d+)", topology).groups()
    return int(k) * int(g)


def decompose(opt, program, topology, hierarchical, explain, timeout):
    options = "hierarchical=%s allow-inexact=true" % str(hierarchical).lower()
    if explain:
        options += " explain=" + explain
    command = [opt, program, "--ein-attach-target=devices=%d topology=%s"
               % (devices(topology), topology),
               "--ein-decompose=" + options, "-o", os.devnull]
    start = time.monotonic()
    try:
        run = subprocess.run(command, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    seconds = time.monotonic() - start
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1]
    capped = "kept only the" in run.stderr
    return seconds, "capped" if capped else "exact"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--topologies", nargs="+", default=TOPOLOGIES)
    parser.add_argument("--workloads", nargs="+", default=WORKLOADS)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    opt = os.path.join(args.build, "bin", "ein-opt")
    work = tempfile.mkdtemp(prefix="plan-hierarchy-")
    print("| workload | topology | hierarchical: s | proxy | simulated ms |"
          " flat: s | proxy | simulated ms | proxy, hier / flat |")
    print("|---|---|---|---|---|---|---|---|---|")
    for workload in args.workloads:
        program = os.path.join(work, workload + ".mlir")
        with open(program, "w") as f:
            subprocess.run([sys.executable, os.path.join(
                ROOT, "examples", "gen_llama_block.py"), "--workload",
                workload], stdout=f, check=True)
        for topology in args.topologies:
            cells, costs = [], []
            for hierarchical in (True, False):
                seconds, how = decompose(opt, program, topology,
                                         hierarchical, None, args.timeout)
                if seconds is None:
                    cells += [how, "", ""]
                    costs.append(None)
                    continue
                explain = os.path.join(work, "explain.json")
                decompose(opt, program, topology, hierarchical, explain,
                          args.timeout * 4)
                with open(explain) as f:
                    e = json.load(f)
                # ein-decompose also simulates other candidates (on several
                # nodes: every byte alike; hierarchical: node-level cuts
                # times one node's) and keeps the fastest; the proxy column
                # is the search's plan's, the simulated one the kept plan's.
                arbitration = e.get("arbitration", [])
                search = [a for a in arbitration
                          if a["plan"] == "the search's"]
                cost = (search[0]["cost_bytes"] if search
                        else e["total_cost_bytes"])
                kept = [a["plan"] for a in arbitration
                        if a["kept"] and a["plan"] != "the search's"]
                costs.append(cost)
                cells += ["%.2f%s" % (seconds, "" if how == "exact" else
                                      " (capped)"),
                          "%.4g GB" % (cost / 1e9),
                          "%.3f%s" % (e["simulated_ms"],
                                      " (kept: %s)" % kept[0] if kept
                                      else "")]
            ratio = ("%.4f" % (costs[0] / costs[1])
                     if None not in costs else "")
            print("| %s | %s | %s | %s |" % (workload, topology,
                                             " | ".join(cells), ratio))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
