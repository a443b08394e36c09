#!/usr/bin/env python3
"""Dataflow plans against eager tensor parallelism, on the simulator.

For each LLaMA workload (one block, bf16) and each machine (NVSwitch with 2
and 8 H200s, the H200 pair, the 8-V100 DGX-1 cube-mesh), weights split
(each GPU holds a share of every weight):
  megatron    the Megatron plan as eager tensor parallelism runs it
              (--strategy=megatron): every op on every GPU, one stream per
              GPU;
  megatron, chunks  the same cuts over the batch in M chunks (the best M of
              2, 4, 8), as a dataflow bundle (stages=1xM: each GPU's
              steps over several streams, a step waiting for its
              dependencies only; the copies op by op, chunk by chunk or
              by critical path, whichever simulates fastest); w1 and w4
              have a batch of 1: chunks of the sequence (since
              2026-12-04), causal attention per chunk over the keys up to
              it (since 2026-12-05);
  search, one stream  the search's plan with weights charged where they
              move, one stream per GPU (below);
  search, dataflow  the search's plan with weights charged where they move
              (weights-replicable=false: each GPU holds its share, a weight
              another GPU needs is gathered; allow-inexact where the state
              cap bites, on 8 GPUs), as a dataflow program
              (stages=1x1), so a weight is gathered while earlier ops run;
  search, chunks    the same search over chunks (the best M).
Each figure is the simulated step of the program as ein-synthesize-exchanges
lowers it (exchange=synthesized; its report's simulated_ms), so the chunks'
slices and concats are counted. Runs on the build machine.

  python3 bench/overlap_table.py [--partials acc|out] [--out FILE.md]
                                 [--workloads w1,w3] [--machines nvswitch:2]

--workloads and --machines take a subset of the rows (workloads by their
short name, machines as topology:devices), to re-run a row without the
whole table (15 min).
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
MACHINES = [("nvswitch", 2), ("h200-pair", 2), ("nvswitch", 8),
            ("dgx1-v100", 8)]
CHUNKS = [2, 4, 8]


def simulated(opt, source, topology, devices, stages, partials, tmp,
              megatron=True):
    """The lowered program's simulated ms, or None where there is no plan."""
    report = os.path.join(tmp, "report.json")
    target = f"devices={devices} chip=sm_90 topology={topology}"
    if partials != "acc":
        target += f" partials={partials}"
    plan = ("strategy=megatron" if megatron else
            "weights-replicable=false allow-inexact=true")
    cmd = [opt, source, "--ein-import", f"--ein-attach-target={target}",
           "--ein-enumerate-specs",
           f"--ein-decompose={plan} stages={stages}",
           "--ein-insert-exchanges",
           "--ein-synthesize-exchanges=exchange=synthesized " +
           ("" if megatron else "weights-replicable=false ") +
           f"report={report}",
           "-o", os.devnull]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return json.load(open(report))["functions"][0]["simulated_ms"]


def best_chunks(opt, source, topology, devices, partials, tmp, megatron):
    best = None
    for m in CHUNKS:
        ms = simulated(opt, source, topology, devices, f"1x{m}", partials,
                       tmp, megatron)
        if ms is not None and (best is None or ms < best[1]):
            best = (m, ms)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opt", default=os.path.join(ROOT, "build/bin/ein-opt"))
    parser.add_argument("--partials", default="acc", choices=["acc", "out"])
    parser.add_argument("--out")
    parser.add_argument("--workloads",
                        help="comma-separated short names (w1,w3); all by "
                             "default")
    parser.add_argument("--machines",
                        help="comma-separated topology:devices "
                             "(nvswitch:2,dgx1-v100:8); all by default")
    args = parser.parse_args()
    workloads = WORKLOADS
    if args.workloads:
        wanted = args.workloads.split(",")
        unknown = set(wanted) - {w.split("-")[0] for w in WORKLOADS}
        if unknown:
            parser.error("unknown workloads: %s (the table has %s)" % (
                ", ".join(sorted(unknown)),
                ", ".join(w.split("-")[0] for w in WORKLOADS)))
        workloads = [w for w in WORKLOADS if w.split("-")[0] in wanted]
    machines = MACHINES
    if args.machines:
        wanted = args.machines.split(",")
        names = ["%s:%d" % m for m in MACHINES]
        unknown = set(wanted) - set(names)
        if unknown:
            parser.error("unknown machines: %s (the table has %s)" % (
                ", ".join(sorted(unknown)), ", ".join(names)))
        machines = [m for m, name in zip(MACHINES, names) if name in wanted]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in workloads:
            source = os.path.join(tmp, w + ".mlir")
            with open(source, "w") as f:
                subprocess.run([sys.executable,
                                os.path.join(ROOT, "examples/gen_llama_block.py"),
                                "--workload", w, "--dtype", "bf16"],
                               stdout=f, check=True)
            for topology, devices in machines:
                run = lambda stages, megatron: simulated(
                    args.opt, source, topology, devices, stages,
                    args.partials, tmp, megatron)
                base = run("off", True)
                cells = [best_chunks(args.opt, source, topology, devices,
                                     args.partials, tmp, True),
                         run("off", False), run("1x1", False),
                         best_chunks(args.opt, source, topology, devices,
                                     args.partials, tmp, False)]
                rows.append((w, f"{topology} x{devices}", base, cells))
                print(rows[-1], file=sys.stderr)
    subset = "".join(f" --{name} {value}" for name, value in
                     (("workloads", args.workloads),
                      ("machines", args.machines)) if value)
    lines = [f"Simulated step (ms), weights split, partials={args.partials}; "
             f"`python3 bench/overlap_table.py"
             f"{' --partials out' if args.partials == 'out' else ''}"
             f"{subset}`, "
             f"{datetime.date.today()}.", "",
             "| workload | machine | megatron, one stream | megatron, chunks "
             "| search, one stream | search, dataflow | search, chunks "
             "| best / megatron |",
             "|---|---|---|---|---|---|---|---|"]
    def cell(c):
        if c is None:
            return "-"
        return f"{c[1]:.3f} ({c[0]})" if isinstance(c, tuple) else f"{c:.3f}"
    for w, machine, base, cells in rows:
        times = [c[1] if isinstance(c, tuple) else c for c in cells
                 if c is not None]
        ratio = f"{base / min(times):.2f}x" if times and base else "-"
        lines.append(f"| {w.split('-')[0]} | {machine} | {cell(base)} | " +
                     " | ".join(cell(c) for c in cells) + f" | {ratio} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
