#!/usr/bin/env python3
"""Measures the CUDA runtime's own costs with synthetic bundles and ein-run.

  python3 bench/cuda_runtime.py --ein-run BUILD/ein-run [--out results.md]

Two questions of the CUDA runtime issue, answered on the GPU machine:

1. What does replaying the step's one CUDA graph cost per node, on one GPU and
   with every node waiting on the other GPU (cross-device edges), against
   issuing the same schedule eagerly (EIN_CUDA_GRAPH=off)? If a multi-GPU
   graph cost clearly more per node than a one-GPU graph, per-device graphs
   joined by events would be the better design.
2. Where does the copy kernel beat the copy engine (EIN_CUDA_COPY=kernel
   against engine) for a peer transfer, contiguous and 2-D strided?
3. What does batching save: K regions pulled from GPU 1 into GPU 0 after a
   step on GPU 1 made them, as K transfer steps against one batched step
   (one launch of the batched copy kernel, one cross-GPU edge)?

  --sections graph,copy,batch picks the questions (all by default).

Only the Python standard library is used. Every figure is ein-run's median of
--iters timed steps after --warmup, CUDA events around the whole step.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile


def f32(shape):
    return {"dtype": "f32", "shape": shape}


def identity_program(shape):
    """y = x: the program whose signature the bundles share."""
    loops = list(range(len(shape)))
    return {
        "format": "ein-program", "version": 1, "function": "identity",
        "arguments": [{"name": "arg0", "type": f32(shape)}],
        "ops": [{"kind": "join_agg", "result": "v0", "type": f32(shape),
                 "inputs": ["arg0"], "input_indices": [loops],
                 "output_indices": loops, "agg": "none", "acc": "f32",
                 "join": {"args": ["f32"], "ops": [], "yield": 0}}],
        "results": ["v0"],
    }


def slice_program(shape, offsets, sizes):
    return {
        "format": "ein-program", "version": 1, "function": "slice",
        "arguments": [{"name": "arg0", "type": f32(shape)}],
        "ops": [{"kind": "slice", "result": "v0", "type": f32(sizes),
                 "inputs": ["arg0"], "offsets": offsets, "sizes": sizes}],
        "results": ["v0"],
    }


def align(n):
    return (n + 255) // 256 * 256


def chain_bundle(steps, gpus, cross=True):
    """`steps` transfers of 256 bytes. On one GPU, one dependency chain; on
    two, alternating between the GPUs: with `cross`, one chain whose every
    link waits on the other GPU, else one independent chain per GPU."""
    buffers = [{"name": "X%d" % d, "device": d, "offset": 0,
                "type": f32([64])} for d in range(gpus)]
    cursor = [256] * gpus
    schedule = []
    last = ["X%d" % d for d in range(gpus)]  # each GPU's newest buffer
    previous = last[0]
    for i in range(steps):
        device = i % gpus
        name = "T%d" % i
        buffers.append({"name": name, "device": device,
                        "offset": cursor[device], "type": f32([64])})
        cursor[device] += 256
        source = previous if cross else last[device]
        back = 1 if cross else gpus
        schedule.append({"kind": "transfer", "device": device,
                         "from": source, "to": name,
                         "deps": [i - back] if i >= back else []})
        previous = last[device] = name
    manifest = {
        "format": "ein-bundle", "version": 1, "target": "cuda",
        "chip": "sm_90", "devices": gpus, "arena_bytes": cursor,
        "kernel_libraries": [], "buffers": buffers,
        "inputs": [{"type": f32([64]),
                    "blocks": [{"buffer": "X%d" % d} for d in range(gpus)]}],
        "outputs": [{"type": f32([64]), "blocks": [{"buffer": previous}]}],
        "steps": schedule,
    }
    return manifest, identity_program([64])


def transfer_bundle(nbytes, strided):
    """One pull of `nbytes` from GPU 1 into GPU 0: contiguous, or every
    other 1 KiB of each row (a 2-D copy)."""
    if strided:
        row = 256  # f32 elements: 1 KiB rows
        rows = nbytes // (row * 4)
        source, extent = [rows, 2 * row], [rows, row]
    else:
        source = extent = [nbytes // 4]
    manifest = {
        "format": "ein-bundle", "version": 1, "target": "cuda",
        "chip": "sm_90", "devices": 2,
        "arena_bytes": [align(nbytes), align(4 * source[0] *
                                             (source[1] if strided else 1))],
        "kernel_libraries": [],
        "buffers": [
            {"name": "X", "device": 1, "offset": 0, "type": f32(source)},
            {"name": "Y", "device": 0, "offset": 0, "type": f32(extent)},
        ],
        "inputs": [{"type": f32(source), "blocks": [{"buffer": "X"}]}],
        "outputs": [{"type": f32(extent), "blocks": [{"buffer": "Y"}]}],
        "steps": [{"kind": "transfer", "device": 0, "from": "X", "to": "Y",
                   "extent": extent}],
    }
    program = (slice_program(source, [0, 0], extent) if strided
               else identity_program(source))
    return manifest, program


def batch_bundle(regions, nbytes, batched, gpus=2):
    """GPU 1 copies its input into X (the producer), then GPU 0 pulls X's
    `regions` slices of `nbytes` each into Y: one transfer step each, or one
    batched step. With one GPU, all of it on GPU 0 (local copies: the graph
    node and launch a batch saves, without the cross-GPU edge)."""
    src = 1 if gpus == 2 else 0
    n = regions * nbytes // 4
    pieces = [{"from": "X", "from_offset": [i * n // regions], "to": "Y",
               "to_offset": [i * n // regions], "extent": [n // regions]}
              for i in range(regions)]
    producer = {"kind": "transfer", "device": src, "from": "XI", "to": "X"}
    if batched:
        pulls = [{"kind": "transfer", "device": 0, "regions": pieces,
                  "deps": [0]}]
    else:
        pulls = [dict(p, kind="transfer", device=0, deps=[0]) for p in pieces]
    manifest = {
        "format": "ein-bundle", "version": 1, "target": "cuda",
        "chip": "sm_90", "devices": gpus,
        "arena_bytes": ([align(4 * n), 2 * align(4 * n)] if gpus == 2
                        else [3 * align(4 * n)]),
        "kernel_libraries": [],
        "buffers": [
            {"name": "XI", "device": src, "offset": 0, "type": f32([n])},
            {"name": "X", "device": src, "offset": align(4 * n),
             "type": f32([n])},
            {"name": "Y", "device": 0,
             "offset": 0 if gpus == 2 else 2 * align(4 * n),
             "type": f32([n])},
        ],
        "inputs": [{"type": f32([n]), "blocks": [{"buffer": "XI"}]}],
        "outputs": [{"type": f32([n]), "blocks": [{"buffer": "Y"}]}],
        "steps": [producer] + pulls,
    }
    return manifest, identity_program([n])


def run_bundle(ein_run, bundle, env, warmup, iters, log):
    manifest, program = bundle
    with tempfile.TemporaryDirectory() as d:
        for name, value in (("manifest.json", manifest),
                            ("program.json", program)):
            with open(os.path.join(d, name), "w") as f:
                json.dump(value, f)
        cmd = [ein_run, d, "--bench", "--warmup=%d" % warmup,
               "--iters=%d" % iters]
        full_env = dict(os.environ, **env)
        done = subprocess.run(cmd, env=full_env, capture_output=True,
                              text=True)
        log.write("$ %s %s\n%s%s" % (" ".join("%s=%s" % kv for kv in env.items()),
                                     " ".join(cmd), done.stdout, done.stderr))
        if done.returncode != 0:
            raise SystemExit("ein-run failed: " + done.stderr)
        return float(re.search(r"median_ms=([0-9.]+)", done.stdout).group(1))


def graph_section(args, emit, log):
    emit("## Graph replay against node count")
    emit()
    emit("Chains of 256-byte transfers. 1 GPU: one chain. 2 GPUs, "
         "crossing: one chain alternating between the GPUs, so every "
         "node waits on the other GPU. 2 GPUs, apart: one chain per GPU, "
         "no edge between them.")
    emit()
    emit("| nodes | GPUs | graph ms | us/node | eager ms | us/node |")
    emit("|---|---|---|---|---|---|")
    for steps in (1, 10, 100, 1000):
        for gpus, cross, label in ((1, True, "1"), (2, True, "2, crossing"),
                                   (2, False, "2, apart")):
            if steps == 1 and gpus == 2 and not cross:
                continue
            bundle = chain_bundle(steps, gpus, cross)
            graph = run_bundle(args.ein_run, bundle, {}, args.warmup,
                               args.iters, log)
            eager = run_bundle(args.ein_run, bundle,
                               {"EIN_CUDA_GRAPH": "off"}, args.warmup,
                               args.iters, log)
            emit("| %d | %s | %.4f | %.2f | %.4f | %.2f |" %
                 (steps, label, graph, 1000 * graph / steps, eager,
                  1000 * eager / steps))
    emit()


def copy_section(args, emit, log):
    emit("## Peer transfer, GPU 1 to GPU 0: copy engine against copy "
         "kernel")
    emit()
    emit("| bytes | shape | engine ms | GB/s | kernel ms | GB/s |")
    emit("|---|---|---|---|---|---|")
    for nbytes in (4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20,
                   64 << 20, 256 << 20):
        for strided in (False, True):
            bundle = transfer_bundle(nbytes, strided)
            times = [run_bundle(args.ein_run, bundle,
                                {"EIN_CUDA_COPY": mode}, args.warmup,
                                args.iters, log)
                     for mode in ("engine", "kernel")]
            emit("| %d | %s | %.4f | %.1f | %.4f | %.1f |" %
                 (nbytes, "2-D, 1 KiB rows" if strided else "contiguous",
                  times[0], nbytes / times[0] / 1e6, times[1],
                  nbytes / times[1] / 1e6))
    emit()


def batch_section(args, emit, log):
    if args.batch_gpus == 2:
        emit("## Batched transfers: K regions from GPU 1 to GPU 0")
        emit()
        emit("A step on GPU 1 writes X; GPU 0 then pulls K slices of X, as K "
             "transfer steps (each waiting on GPU 1's step) or as one "
             "batched step. Whole step, graph replay, EIN_CUDA_COPY=auto.")
    else:
        emit("## Batched copies on one GPU: K regions")
        emit()
        emit("A step writes X; then K slices of X are copied into Y on the "
             "same GPU, as K transfer steps or as one batched step: the "
             "graph nodes and launches a batch saves, without the cross-GPU "
             "edges. Whole step, graph replay, EIN_CUDA_COPY=auto.")
    emit()
    emit("| K | bytes a region | K steps ms | batched ms | saved us | "
         "K steps / batched |")
    emit("|---|---|---|---|---|---|")
    for regions in (2, 4, 8, 16):
        for nbytes in (256, 4 << 10, 64 << 10, 1 << 20):
            times = [run_bundle(args.ein_run,
                                batch_bundle(regions, nbytes, batched,
                                             args.batch_gpus), {},
                                args.warmup, args.iters, log)
                     for batched in (False, True)]
            emit("| %d | %d | %.4f | %.4f | %.1f | %.2f |" %
                 (regions, nbytes, times[0], times[1],
                  1000 * (times[0] - times[1]), times[0] / times[1]))
    emit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ein-run", required=True)
    parser.add_argument("--out", help="write the tables here (markdown)")
    parser.add_argument("--log", default=os.devnull,
                        help="every ein-run command and its output")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--sections", default="graph,copy,batch")
    parser.add_argument("--batch-gpus", type=int, choices=(1, 2), default=2,
                        help="the batch section on 2 GPUs or on one")
    args = parser.parse_args()
    sections = args.sections.split(",")
    lines = []

    def emit(text=""):
        print(text)
        lines.append(text)

    with open(args.log, "w") as log:
        emit("# CUDA runtime costs (%s)" % datetime.date.today().isoformat())
        emit()
        if "graph" in sections:
            graph_section(args, emit, log)
        if "copy" in sections:
            copy_section(args, emit, log)
        if "batch" in sections:
            batch_section(args, emit, log)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
