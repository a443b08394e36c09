"""Copies a bundle with the first step of a kind dropped: a mutation the
loader must refuse. Steps that depended on the dropped one inherit its
dependencies (scripts/mutate_bundles.py's drop-step), so the schedule stays
well ordered and only the data is missing.

usage: drop_step.py BUNDLE OUT KIND   (KIND: transfer, aggregate, kernel...)
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "scripts"))
from mutate_bundles import drop_step  # noqa: E402


def main():
    src, out, kind = sys.argv[1:4]
    shutil.copytree(src, out)
    with open(f"{out}/manifest.json") as f:
        m = json.load(f)
    steps = m["steps"]
    victim = next((i for i, s in enumerate(steps) if s["kind"] == kind), None)
    if victim is None:
        sys.exit(f"drop_step.py: no {kind} step in {src}")
    drop_step(m, victim)
    with open(f"{out}/manifest.json", "w") as f:
        json.dump(m, f, indent=2)
    print(f"dropped step {victim} ({kind})")


if __name__ == "__main__":
    main()
