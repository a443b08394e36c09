#!/usr/bin/env python3
"""Chunked dataflow plans against eager tensor parallelism, on the simulator.

For each batched LLaMA workload (one block, bf16; w1 and w4 have a batch of
1, which chunks do not cut) and each machine (NVSwitch with 2 and 8 H200s,
the H200 pair, the 8-V100 DGX-1 cube-mesh), weights split as tensor
parallelism splits them (--strategy=megatron):
  megatron    the Megatron plan as eager tensor parallelism runs it: every
              op whole on every GPU, one stream per GPU;
  chunks M    the same cuts over the batch in M chunks, op by op, as a
              dataflow bundle (stages=1xM: each GPU's steps over several
              streams, a step waiting for its dependencies only).
Each figure is the simulated step of the program as ein-synthesize-exchanges
lowers it (exchange=synthesized; its report's simulated_ms), so the chunks'
slices and concats are counted. Runs on the build machine.

  python3 bench/overlap_table.py [--partials acc|out] [--out FILE.md]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["w2-l3-8b-b8-s2k", "w3-l2-7b-b4-s4k", "w5-l3-8b-b32-s512"]
MACHINES = [("nvswitch", 2), ("h200-pair", 2), ("nvswitch", 8),
            ("dgx1-v100", 8)]
CHUNKS = [2, 4, 8]


def simulated(opt, source, topology, devices, stages, partials, tmp):
    report = os.path.join(tmp, "report.json")
    target = f"devices={devices} chip=sm_90 topology={topology}"
    if partials != "acc":
        target += f" partials={partials}"
    cmd = [opt, source, "--ein-import", f"--ein-attach-target={target}",
           "--ein-enumerate-specs",
           f"--ein-decompose=strategy=megatron stages={stages}",
           "--ein-insert-exchanges",
           f"--ein-synthesize-exchanges=exchange=synthesized report={report}",
           "-o", os.devnull]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[0]
    function = json.load(open(report))["functions"][0]
    return function["simulated_ms"], sum(function["bytes"].values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opt", default=os.path.join(ROOT, "build/bin/ein-opt"))
    parser.add_argument("--partials", default="acc", choices=["acc", "out"])
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in WORKLOADS:
            source = os.path.join(tmp, w + ".mlir")
            with open(source, "w") as f:
                subprocess.run([sys.executable,
                                os.path.join(ROOT, "examples/gen_llama_block.py"),
                                "--workload", w, "--dtype", "bf16"],
                               stdout=f, check=True)
            for topology, devices in MACHINES:
                base, base_bytes = simulated(args.opt, source, topology, devices,
                                             "off", args.partials, tmp)
                cells = []
                best = None
                for m in CHUNKS:
                    ms, _ = simulated(args.opt, source, topology, devices,
                                      f"1x{m}", args.partials, tmp)
                    cells.append(ms)
                    if ms is not None and (best is None or ms < best[1]):
                        best = (m, ms)
                rows.append((w, f"{topology} x{devices}", base, cells, best))
                print(rows[-1], file=sys.stderr)
    lines = [f"Simulated step (ms), weights split (strategy=megatron), "
             f"partials={args.partials}; `python3 bench/overlap_table.py"
             f"{' --partials out' if args.partials == 'out' else ''}`, "
             f"{datetime.date.today()}.", "",
             "| workload | machine | megatron, one stream | " +
             " | ".join(f"{m} chunks, dataflow" for m in CHUNKS) +
             " | best / megatron |",
             "|---|---|---|" + "---|" * len(CHUNKS) + "---|"]
    for w, machine, base, cells, best in rows:
        ratio = f"{base / best[1]:.2f}x ({best[0]} chunks)" if best else "-"
        lines.append(f"| {w.split('-')[0]} | {machine} | {base:.3f} | " +
                     " | ".join(f"{c:.3f}" if c else "-" for c in cells) +
                     f" | {ratio} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
