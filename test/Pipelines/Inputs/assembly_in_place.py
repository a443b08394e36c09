"""Counts, in a bundle's manifest, the parts of assembled blocks written in
place (buffers that view rows of another at a non-zero offset) and the
local copies that could have been: a tensor.insert_slice copy of all of a
buffer steps made (no input or output block, no slice of another buffer)
into one 256-byte-aligned run of rows of the block it assembles. A bundle
ein-write-bundle writes has none of the latter."""
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
missed = []
for i, step in enumerate(m["steps"]):
    if step["kind"] != "transfer" or "insert_slice" not in step["label"]:
        continue
    for r in step.get("regions", [step]):
        src, dst = buffers[r["from"]], buffers[r["to"]]
        whole = (src["offset"] == buffers[root(r["from"])]["offset"] and
                 nbytes(src) == nbytes(buffers[root(r["from"])]))
        first = run_start(dst["type"]["shape"], r["to_offset"], r["extent"])
        if (src["device"] == dst["device"] and whole and first is not None and
                root(r["from"]) not in kept and r["from"] not in kept and
                (dst["offset"] + first * size[dst["type"]["dtype"]]) % 256 == 0):
            missed.append(i)
print("parts in place: %d; rows copied that could be in place: %d %s" %
      (len(in_place), len(missed), missed[:5]))
