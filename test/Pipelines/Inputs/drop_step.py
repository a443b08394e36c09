"""Copies a bundle with one step of a kind dropped: a mutation that --check
must catch. Steps that depended on the dropped one inherit its dependencies,
so the schedule stays well ordered and only the data is missing.

usage: drop_step.py BUNDLE OUT KIND   (KIND: transfer or aggregate; drops
the first step of that kind whose result another step or an output reads)
"""
import json
import shutil
import sys


def main():
    src, out, kind = sys.argv[1:4]
    shutil.copytree(src, out)
    with open(f"{out}/manifest.json") as f:
        m = json.load(f)
    steps = m["steps"]
    victim = next((i for i, s in enumerate(steps) if s["kind"] == kind), None)
    if victim is None:
        sys.exit(f"drop_step.py: no {kind} step in {src}")
    inherited = steps[victim].get("deps", [])
    kept = []
    for i, s in enumerate(steps):
        if i == victim:
            continue
        deps = set()
        for d in s.get("deps", []):
            deps.update(inherited if d == victim else [d])
        s["deps"] = sorted(d - (d > victim) for d in deps)
        kept.append(s)
    m["steps"] = kept
    with open(f"{out}/manifest.json", "w") as f:
        json.dump(m, f, indent=2)
    print(f"dropped step {victim} ({kind})")


if __name__ == "__main__":
    main()
