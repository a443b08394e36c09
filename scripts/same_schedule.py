#!/usr/bin/env python3
"""Whether two bundle trees differ only in waits the other waits imply.

  scripts/same_schedule.py OLD_DIR NEW_DIR

Every file must be byte-identical but manifest.json files, which must agree
in every field but the steps' `deps`, each new step's deps a subset of its
old ones, and each step with the same set of steps ordered before it (the
transitive closure of the waits): the runtime then runs the same order.
Exits 1, naming the first file that breaks this, otherwise prints counts.
"""
import json
import os
import sys


def before(steps):
    """Per step, the set of steps ordered before it, as a bit mask."""
    masks = []
    for step in steps:
        mask = 0
        for d in step.get("deps", []):
            mask |= masks[d] | (1 << d)
        masks.append(mask)
    return masks


def same_order(old, new):
    a, b = json.loads(old), json.loads(new)
    sa, sb = a.pop("steps", []), b.pop("steps", [])
    if a != b or len(sa) != len(sb):
        return False
    for x, y in zip(sa, sb):
        dx, dy = set(x.pop("deps", [])), set(y.pop("deps", []))
        if x != y or not dy <= dx:
            return False
        x["deps"], y["deps"] = sorted(dx), sorted(dy)
    return before(sa) == before(sb)


def main():
    old_root, new_root = sys.argv[1:3]
    files = identical = reordered = 0
    for root, _, names in os.walk(old_root):
        for name in sorted(names):
            old = os.path.join(root, name)
            new = os.path.join(new_root, os.path.relpath(old, old_root))
            files += 1
            a = open(old, "rb").read()
            b = open(new, "rb").read() if os.path.exists(new) else None
            if a == b:
                identical += 1
            elif b is not None and name == "manifest.json" and same_order(a, b):
                reordered += 1
            else:
                print(f"same_schedule: {new} differs from {old}", file=sys.stderr)
                return 1
    print(f"same_schedule: {files} files, {identical} byte-identical, "
          f"{reordered} manifests with the same order of steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
