#!/usr/bin/env python3
"""ein against upstream MLIR's own partitioner, given the same pins.

For each linalg test program (test/Pipelines/Inputs/linalg_*.mlir) and the
front end's LLaMA and GPT-2 blocks in linalg form, on 4 and 8 devices:

  1. the same input pin for both: the first argument (the activation) split
     along its first dimension of at least as many elements as devices (the
     batch, else the sequence) over a 1-D grid of all devices, as a user or
     a front end writes it (`shard.shard %arg0 to ... : split_axes = [[0]]`);
  2. upstream: LLVM 22's `mlir-opt --pass-pipeline=builtin.module(func.func(
     sharding-propagation,shard-partition))`; its collectives' bytes summed
     over the devices (ring costs: an all-reduce of T moves 2 (n-1)/n |T|
     per device, an all-gather (n-1)/n |result|, an all-to-all (n-1)/n |T|,
     a reduce-scatter (n-1)/n |input|; an all-slice moves nothing); whether
     its pinned argument's shards still cover the argument (upstream cuts
     97 rows 4 ways into 24-row shards, dropping one);
  3. ein: ein-import, ein-fuse-composites, ein-decompose (explain JSON) on the
     same pinned program; the bytes of its synthesized exchange program,
     summed over every transfer.

Runs on the build machine (no GPU): bytes are a property of the plans.

  python3 bench/shard_vs_ein.py [--build build] [--out bench/results/FILE.md]
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
UPSTREAM = ("builtin.module(func.func(sharding-propagation,"
            "shard-partition))")
ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
                 "i8": 1, "i1": 1}


def tensor_bytes(text):
    """'tensor<12x12xf32>' -> bytes."""
    m = re.match(r"tensor<((?:\d+x)*)(\w+)>", text)
    dims = [int(d) for d in m.group(1).split("x") if d]
    n = 1
    for d in dims:
        n *= d
    return n * ELEMENT_BYTES.get(m.group(2), 4), dims


def pin_first_argument(text, devices):
    """The program with its first argument split along dimension 0 over a
    1-D grid of `devices`; None where it has no tensor argument."""
    m = re.search(r"func\.func @(\w+)\((%[\w]+): (tensor<[^>]+>)", text)
    if not m:
        return None, None
    name, typ = m.group(2), m.group(3)
    _, dims = tensor_bytes(typ)
    dim = next((d for d, size in enumerate(dims) if size >= devices), None)
    if dim is None:
        return None, None
    body = text.index("{\n", m.end()) + 1
    axes = "[" + "[], " * dim + "[0]]"
    pin = ("\n  %%bench_s = shard.sharding @bench split_axes = %s : "
           "!shard.sharding\n  %%bench_x = shard.shard %s to %%bench_s : %s"
           % (axes, name, typ))
    rest = re.sub(r"(?<![\w%])" + re.escape(name) + r"(?![\w])", "%bench_x",
                  text[body:])
    pinned = text[:body] + pin + rest
    pinned = pinned.replace("%bench_x to %bench_s", name + " to %bench_s", 1)
    grid = "shard.grid @bench(shape = %d)\n" % devices
    if re.search(r"^\s*module\b[^{]*{", pinned, re.M):
        pinned = re.sub(r"^(\s*module\b[^{]*{)", r"\1\n" + grid, pinned,
                        count=1, flags=re.M)
    else:
        pinned = grid + pinned
    return pinned, (dim, dims[dim])


def upstream(path, devices, rows):
    proc = subprocess.run([MLIR_OPT, path, "--pass-pipeline=" + UPSTREAM],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        first = next((l for l in proc.stderr.splitlines() if "error:" in l),
                     "")
        crash = proc.returncode < 0 or "Stack dump" in proc.stderr
        why = "crashes (signal %d)" % -proc.returncode if proc.returncode < 0 \
            else ("crashes" if crash else "refuses: " +
                  first.split("error:", 1)[-1].strip()[:70])
        return {"status": why}
    out = proc.stdout
    grids = {g: [int(s) for s in shape.split("x")]
             for g, shape in re.findall(r"shard\.grid @(\w+)\(shape = ([\dx]+)\)",
                                        out)}
    total, count = 0.0, 0
    for kind, grid, axes, types in re.findall(
            r"shard\.(all_reduce|all_gather|all_to_all|reduce_scatter|"
            r"broadcast|all_slice|send|recv|gather|scatter|reduce) [^\n]*?on "
            r"@(\w+)(?: grid_axes = \[([\d, ]*)\])?[^\n]*?: ([^\n]*)", out):
        sizes = grids.get(grid, [devices])
        n = 1
        for a in [int(a) for a in axes.split(",") if a.strip()] or \
                range(len(sizes)):
            n *= sizes[a]
        tys = re.findall(r"tensor<[^>]+>", types)
        if not tys or n <= 1:
            continue
        src, _ = tensor_bytes(tys[0])
        dst, _ = tensor_bytes(tys[-1])
        per_device = {"all_reduce": 2.0 * (n - 1) / n * src,
                      "all_gather": (n - 1) / n * dst,
                      "all_to_all": (n - 1) / n * src,
                      "reduce_scatter": (n - 1) / n * src,
                      "all_slice": 0.0}.get(kind, float(src))
        total += per_device * devices
        count += 1
    # The pinned argument's shards: dimension 0 of the partitioned
    # function's first argument, times the devices.
    m = re.search(r"func\.func @\w+\(%\w+: (tensor<[^>]+>)", out)
    covered = None
    dim, size = rows
    if m:
        _, dims = tensor_bytes(m.group(1))
        covered = dims[dim] * devices if len(dims) > dim else None
    status = "partitions"
    if covered is not None and covered < size:
        status = "partitions, WRONG: shards cover %d of %d" % (covered, size)
    return {"status": status, "bytes": total, "collectives": count}


def ein(build, path, devices, tmp):
    explain = os.path.join(tmp, "explain.json")
    proc = subprocess.run(
        [os.path.join(build, "bin", "ein-opt"), path, "--ein-import",
         "--ein-fuse-composites", "--ein-attach-target=devices=%d" % devices,
         "--ein-decompose=allow-inexact=true explain=" + explain, "-o",
         os.devnull], capture_output=True, text=True)
    if proc.returncode != 0:
        first = next((l for l in proc.stderr.splitlines() if "error:" in l),
                     proc.stderr.strip()[:80])
        return {"status": "refuses: " + first.split("error:", 1)[-1][:70]}
    with open(explain) as f:
        report = json.load(f)
    moved = sum(e["bytes"] for e in report["exchanges"])
    return {"status": "plans", "bytes": float(moved),
            "transfers": len(report["exchanges"])}


def programs(build, tmp):
    inputs = os.path.join(ROOT, "test", "Pipelines", "Inputs")
    out = [(f[len("linalg_"):-len(".mlir")], os.path.join(inputs, f))
           for f in sorted(os.listdir(inputs))
           if f.startswith("linalg_") and f.endswith(".mlir")
           and f != "linalg_pinned_mlp.mlir"]
    # The front end's blocks in linalg form (python3-torch on this machine).
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for model, shape in (("LlamaBlock", "2x16x64"), ("GPT2Block", "2x16x64")):
        path = os.path.join(tmp, model + ".mlir")
        proc = subprocess.run(
            ["/usr/bin/python3", "-m", "einsummable", "export",
             os.path.join(ROOT, "python", "tests", "models.py") + ":" + model,
             "--inputs", shape + ":f32", "-o", path], capture_output=True,
            text=True, env=env)
        if proc.returncode == 0:
            out.append((model + " (front end)", path))
        else:
            print("skipping %s: %s" % (model, proc.stderr.strip()[-200:]),
                  file=sys.stderr)
    return out


def human(b):
    if b is None:
        return "-"
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return "%.1f %s" % (b / scale, unit)
    return "%d B" % b


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--devices", default="4,8")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in programs(args.build, tmp):
            text = open(path).read()
            for devices in [int(d) for d in args.devices.split(",")]:
                pinned, size = pin_first_argument(text, devices)
                if pinned is None:
                    rows.append((name, devices, "-", {"status": "no pin"},
                                 {"status": "-"}))
                    continue
                pinned_path = os.path.join(tmp, "pinned.mlir")
                with open(pinned_path, "w") as f:
                    f.write(pinned)
                rows.append((name, devices, size,
                             upstream(pinned_path, devices, size),
                             ein(args.build, pinned_path, devices, tmp)))
    lines = [
        "# ein against upstream `shard-partition`, the same pin",
        "",
        "Measured %s on the build machine: `python3 bench/shard_vs_ein.py`."
        % datetime.date.today().isoformat(),
        "Pin: argument 0 split along dimension 0 over a 1-D grid of all "
        "devices. Bytes: summed over devices (upstream: its collectives at "
        "ring cost; ein: its synthesized exchange program's transfers).",
        "",
        "| program | devices | pinned | upstream | upstream bytes | "
        "ein | ein bytes |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, devices, size, up, mine in rows:
        pinned = "-" if size == "-" else "dim %d (%d)" % size
        lines.append("| %s | %d | %s | %s | %s | %s | %s |" % (
            name, devices, pinned, up["status"], human(up.get("bytes")),
            mine["status"], human(mine.get("bytes"))))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
