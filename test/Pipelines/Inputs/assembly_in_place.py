"""Counts, in a bundle's manifest, the parts of assembled blocks written in
place (buffers that view rows of another at a non-zero offset), the
transfers that land a part in its region of the block, and the local copies
that could have been avoided: a tensor.insert_slice copy of all of a buffer
steps made (no input or output block, no slice of another buffer) into one
256-byte-aligned run of rows of the block it assembles, or of a buffer one
transfer alone wrote and nothing else reads. A bundle ein-write-bundle
writes has none of the latter."""
import json
import math
import sys

m = json.load(open(sys.argv[1] + "/manifest.json"))
buffers = {b["name"]: b for b in m["buffers"]}
kept = {p["buffer"] for t in m["inputs"] + m.get("constants", []) + m["outputs"]
        for p in t["blocks"]}
size = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i32": 4, "i64": 8}


def root(name):
    return buffers[name].get("view_of", name)


def nbytes(b):
    return math.prod(b["type"]["shape"]) * size[b["type"]["dtype"]]


def run_start(shape, offset, extent):
    """The first element of a region that is one run of rows, or None."""
    k = 0
    while k + 1 < len(extent) and extent[k] == 1:
        k += 1
    if any(extent[d] != shape[d] for d in range(k + 1, len(extent))):
        return None
    first = 0
    for d in range(len(shape)):
        first = first * shape[d] + offset[d]
    return first


in_place = [b for b in m["buffers"] if "view_of" in b and
            b["offset"] != buffers[b["view_of"]]["offset"]]
# Per buffer, the steps that write it and those that read it.
wrote, read = {}, {}
for i, step in enumerate(m["steps"]):
    for r in step.get("regions", [step] if step["kind"] == "transfer" else []):
        wrote.setdefault(r["to"], []).append(i)
        read.setdefault(r["from"], []).append(i)
    for key in ("a", "b", "bias", "addend", "q", "k", "v"):
        if key in step:
            read.setdefault(step[key], []).append(i)
    for name in step.get("inputs", []):
        read.setdefault(name, []).append(i)
    for arg in step.get("args", []):
        if arg["access"] != "write":
            read.setdefault(arg["buffer"], []).append(i)
# A transfer lands a part in place where the region it writes is no whole
# buffer.
landed = sum(1 for step in m["steps"] if step["kind"] == "transfer" and
             "ein.transfer" in step["label"]
             for r in step.get("regions", [step])
             if r["extent"] != buffers[r["to"]]["type"]["shape"])
missed = []
for i, step in enumerate(m["steps"]):
    if step["kind"] != "transfer" or "insert_slice" not in step["label"]:
        continue
    for r in step.get("regions", [step]):
        src, dst = buffers[r["from"]], buffers[r["to"]]
        whole = (src["offset"] == buffers[root(r["from"])]["offset"] and
                 nbytes(src) == nbytes(buffers[root(r["from"])]))
        first = run_start(dst["type"]["shape"], r["to_offset"], r["extent"])
        if src["device"] != dst["device"]:
            continue
        rows = (whole and first is not None and root(r["from"]) not in kept
                and r["from"] not in kept and
                (dst["offset"] + first * size[dst["type"]["dtype"]]) % 256 == 0)
        writers = wrote.get(r["from"], [])
        received = (len(writers) == 1 and "view_of" not in src and
                    "ein.transfer" in m["steps"][writers[0]]["label"] and
                    read.get(r["from"]) == [i])
        if rows or received:
            missed.append(i)
print("parts in place: %d; transfers landing parts: %d; copies that could "
      "be in place: %d %s" % (len(in_place), landed, len(missed), missed[:5]))
