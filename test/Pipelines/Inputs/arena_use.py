"""Prints, per device of a bundle, its arena's bytes against the sum of its
buffers' (views counted once, by offset and size), and how many pairs of
buffers share bytes: what ein-write-bundle's memory reuse saves.

  python3 arena_use.py BUNDLE_DIR"""
import json
import sys

DTYPE_BYTES = {"f64": 8, "f32": 4, "i64": 8, "i32": 4, "f16": 2, "bf16": 2,
               "i16": 2, "i8": 1, "i1": 1}

m = json.load(open(sys.argv[1] + "/manifest.json"))
for device, arena in enumerate(m["arena_bytes"]):
    spans = set()
    for b in m["buffers"]:
        if b["device"] != device:
            continue
        n = 1
        for d in b["type"]["shape"]:
            n *= d
        spans.add((b["offset"], b["offset"] + n * DTYPE_BYTES[b["type"]["dtype"]]))
    spans = sorted(spans)
    shared = sum(1 for i, (b0, e0) in enumerate(spans)
                 for (b1, e1) in spans[i + 1:] if b1 < e0 and b0 < e1)
    total = sum(e - b for b, e in spans)
    print(f"device {device}: arena {arena} bytes, buffers {total} bytes, "
          f"{'reused' if arena < total else 'not reused'} "
          f"({shared} overlapping pairs)")
