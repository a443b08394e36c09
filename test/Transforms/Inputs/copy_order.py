"""Reads an ein-synthesize-exchanges report and says, per function and
receiving GPU, whether the lowered function's transfers ("copy_order", the
order that GPU's copy stream runs them) start in that order in the simulated
step ("start_ms"). Exits 1 where one starts before the transfer ahead of it."""
import json
import sys

report = json.load(open(sys.argv[1]))
bad = False
for function in report["functions"]:
    exchanges = [e for e in function["exchanges"] if "copy_order" in e]
    for gpu in sorted({e["to"] for e in exchanges}):
        # Members of a batch share one transfer, and its place.
        places = {}
        for e in exchanges:
            if e["to"] == gpu:
                places.setdefault(e["copy_order"], e["start_ms"])
        starts = [places[p] for p in sorted(places)]
        late = [i for i in range(1, len(starts)) if starts[i] < starts[i - 1] - 1e-9]
        if late:
            bad = True
            i = late[0]
            print(f"{function['function']} GPU {gpu}: transfer {i} starts at "
                  f"{starts[i]:.6f} ms, before transfer {i - 1} at {starts[i - 1]:.6f}")
        else:
            print(f"{function['function']} GPU {gpu}: {len(starts)} transfers, "
                  "in the order the schedule starts them")
sys.exit(1 if bad else 0)
