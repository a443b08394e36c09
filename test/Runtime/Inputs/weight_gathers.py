"""Counts a bundle's weight gathers (transfers out of an input buffer) and
how many of them wait for one of the two compute steps before them on their
device (a dependency the buffer plan's reuse adds): in a dataflow bundle
none do, so a weight moves while the previous op computes."""
import json
import sys

m = json.load(open(sys.argv[1]))
steps = m["steps"]
inputs = {blk["buffer"] for l in m["inputs"] for blk in l.get("blocks", [])}
gathers = held = 0
for i, s in enumerate(steps):
    if s["kind"] != "transfer" or s.get("from") not in inputs:
        continue
    gathers += 1
    compute = [j for j in range(i) if steps[j]["device"] == s["device"]
               and steps[j]["kind"] != "transfer"]
    deps = [d for d in s.get("deps", []) if steps[d]["kind"] != "transfer"]
    free = sum(1 for j in compute if j > max(deps, default=-1))
    if free < min(2, len(compute)):
        held += 1
print(gathers, "weight gathers,", held, "held back by the last two compute steps")
