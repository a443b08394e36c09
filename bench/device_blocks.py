#!/usr/bin/env python3
"""The compute term against one GPU's measured compute, over many plans.

For plans of one program on N GPUs (the search's plans with both compute
terms, Megatron's, and legal plans drawn at random), `ein-device-blocks`
writes each plan's share of one GPU (every op's slowest join block) as a
one-device program; this script compiles them for CUDA, times them on one
GPU, and ranks the measured times against the planner's predictions: the
kernel-time term (planner::blockSeconds, the default `compute=kernels`) and
the FLOP count alone (`compute=flops`).

  # build machine: plans and bundles under DIR
  python3 bench/device_blocks.py build PROGRAM.mlir DIR [--devices 8] [--random 14] [--first-seed 1]
  # GPU machine: time every bundle (ein-run --bench, ROUNDS rounds), then report
  python3 bench/device_blocks.py run DIR EIN_RUN [--rounds 1] [--warmup 3] [--iters 30]
  (--warmup 1000 --iters 300: each program timed at the GPU's sustained clock,
  not the boost clock of the idle start while ein-run draws the inputs)
  python3 bench/device_blocks.py report DIR
  # build machine: the same programs predicted again (after new tables)
  python3 bench/device_blocks.py predict DIR
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from summarize_ablation import spearman  # noqa: E402
BIN = os.path.join(os.environ.get("EIN_BUILD_DIR",
                                  os.path.join(HERE, "..", "build")), "bin")


def tool(name):
    return os.path.join(BIN, name)


def plan_blocks(program, devices, decompose, out_mlir):
    """Plans `program` with ein-decompose options `decompose`, writes the
    slowest blocks' one-device program, returns (flops, seconds, specs)."""
    cmd = [tool("ein-opt"), program,
           f"--ein-attach-target=devices={devices} chip=sm_90",
           "--ein-import", "--ein-fuse-composites",
           f"--ein-decompose={decompose}"]
    planned = subprocess.run(cmd, check=True, capture_output=True,
                             text=True).stdout
    specs = re.findall(r"spec = #ein\.spec<\[([0-9, ]*)\]>", planned)
    blocks = subprocess.run(
        [tool("ein-opt"), "-", f"--ein-device-blocks"], input=planned,
        check=True, capture_output=True, text=True).stdout
    with open(out_mlir, "w") as f:
        f.write(blocks)
    return attribute(blocks, "flops"), attribute(blocks, "seconds"), specs


def attribute(mlir, name):
    """An f64 attribute `ein.block_NAME` (MLIR prints some in hex)."""
    text = re.search(rf"ein\.block_{name} = (0x[0-9A-F]+|[0-9.eE+-]+)",
                     mlir)[1]
    if text.startswith("0x"):
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    return float(text)


def build(args):
    os.makedirs(args.dir, exist_ok=True)
    plans = [("optimal", "compute=kernels"), ("optimal-flops", "compute=flops"),
             ("megatron", "strategy=megatron"), ("dp", "strategy=dp")]
    if args.first_seed > 1:
        plans = []  # a further sample of random plans only
    plans += [(f"random-{s}", f"strategy=random seed={s}")
              for s in range(args.first_seed, args.first_seed + args.random)]
    records, seen = [], {}
    for name, decompose in plans:
        mlir = os.path.join(args.dir, f"{name}.mlir")
        try:
            flops, seconds, specs = plan_blocks(args.program, args.devices,
                                                decompose, mlir)
        except subprocess.CalledProcessError as e:
            print(f"{name}: not planned: {e.stderr.strip()[:200]}")
            continue
        key = tuple(specs)
        if key in seen:
            print(f"{name}: the same plan as {seen[key]}")
            continue
        seen[key] = name
        bundle = os.path.join(args.dir, name)
        r = subprocess.run([tool("ein-compile"), mlir, "-o", bundle,
                            "--target=cuda", "--devices=1"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: not compiled: {r.stderr.strip()[:300]}")
            continue
        records.append({"name": name, "decompose": decompose, "flops": flops,
                        "seconds": seconds, "specs": specs})
        print(f"{name}: {flops / 1e12:.3f} TFLOP, predicted "
              f"{seconds * 1e3:.3f} ms")
    with open(os.path.join(args.dir, "plans.json"), "w") as f:
        json.dump({"program": args.program, "devices": args.devices,
                   "plans": records}, f, indent=1)


def run(args):
    with open(os.path.join(args.dir, "plans.json")) as f:
        meta = json.load(f)
    path = args.measured or os.path.join(args.dir, "measured.json")
    measured = {}
    if args.only_missing and os.path.exists(path):
        with open(path) as f:
            measured = json.load(f)
    done = set(measured)
    for r in range(args.rounds):
        for p in meta["plans"]:
            if p["name"] in done:
                continue
            out = subprocess.run(
                [args.ein_run, os.path.join(args.dir, p["name"]), "--bench",
                 f"--warmup={args.warmup}", f"--iters={args.iters}"], capture_output=True,
                text=True)
            m = re.search(r"median_ms=([0-9.]+)", out.stdout + out.stderr)
            if not m:
                print(f"{p['name']}: failed: {(out.stdout + out.stderr)[-300:]}",
                      flush=True)
                continue
            measured.setdefault(p["name"], []).append(float(m[1]))
            print(f"{p['name']}: {m[1]} ms", flush=True)
            # Kept after every bundle, so that a run cut short keeps what
            # it measured.
            with open(path, "w") as f:
                json.dump(measured, f, indent=1)
    report(args)


def predict(args):
    """Predicts the measured one-device programs again with this build's
    tables: each program planned whole on one device, so that every op is
    one block, the same blocks that were timed."""
    path = os.path.join(args.dir, "plans.json")
    with open(path) as f:
        meta = json.load(f)
    for p in meta["plans"]:
        blocks = subprocess.run(
            [tool("ein-opt"), os.path.join(args.dir, p["name"] + ".mlir"),
             "--ein-attach-target=devices=1 chip=sm_90", "--ein-decompose",
             "--ein-device-blocks"], check=True, capture_output=True,
            text=True).stdout
        p["seconds"] = attribute(blocks, "seconds")
        p["flops"] = attribute(blocks, "flops")
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    report(args)


def report(args):
    with open(os.path.join(args.dir, "plans.json")) as f:
        meta = json.load(f)
    with open(getattr(args, "measured", None) or
              os.path.join(args.dir, "measured.json")) as f:
        measured = json.load(f)
    rows = [(p, min(measured[p["name"]])) for p in meta["plans"]
            if measured.get(p["name"])]
    rows.sort(key=lambda r: r[1])
    print(f"{'plan':<16} {'measured ms':>11} {'predicted ms':>12} "
          f"{'TFLOP':>8}")
    for p, ms in rows:
        print(f"{p['name']:<16} {ms:11.3f} {p['seconds'] * 1e3:12.3f} "
              f"{p['flops'] / 1e12:8.3f}")
    ms = [r[1] for r in rows]
    print(f"{len(rows)} plans of {meta['program']} on {meta['devices']} GPUs; "
          f"Spearman against the measured time: kernel times "
          f"{spearman([r[0]['seconds'] for r in rows], ms):.3f}, FLOPs alone "
          f"{spearman([r[0]['flops'] for r in rows], ms):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("program")
    b.add_argument("dir")
    b.add_argument("--devices", type=int, default=8)
    b.add_argument("--random", type=int, default=14,
                   help="how many random plans")
    b.add_argument("--first-seed", type=int, default=1,
                   help="their first seed; above 1, only random plans")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("ein_run")
    r.add_argument("--rounds", type=int, default=1)
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--iters", type=int, default=30)
    r.add_argument("--measured", help="where to keep the times (default "
                   "DIR/measured.json)")
    r.add_argument("--only-missing", action="store_true",
                   help="time only the plans not yet in it")
    p = sub.add_parser("report")
    p.add_argument("dir")
    q = sub.add_parser("predict")
    q.add_argument("dir")
    args = ap.parse_args()
    {"build": build, "run": run, "report": report,
     "predict": predict}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
