"""Checks a Chrome trace-event file (ein-run --profile=FILE.json or an
ein-decompose/ein-compile explanation FILE.trace.json): every complete event
has name, cat, ph, ts, dur, pid and tid; events of one (pid, tid) do not
overlap (a stream runs one step at a time); with --steps N, the events are
the bundle's steps 0..N-1, each once; with --simulated-ms T (the JSON
explanation's simulated_ms), the last event ends at T."""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--steps", type=int)
parser.add_argument("--simulated-ms", type=float)
args = parser.parse_args()
with open(args.trace) as f:
    events = json.load(f)["traceEvents"]
complete = [e for e in events if e["ph"] == "X"]
assert complete, "no complete events"
for e in complete:
    for key in ("name", "cat", "ph", "ts", "dur", "pid", "tid"):
        assert key in e, "event %r has no %s" % (e, key)
    assert e["ts"] >= 0 and e["dur"] >= 0, e
    assert e["name"], e
names = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M"}
lanes = {}
for e in complete:
    lanes.setdefault((e["pid"], e["tid"]), []).append(e)
    assert any(m[0] == e["pid"] for m in names), "pid %d unnamed" % e["pid"]
for lane, evs in lanes.items():
    evs.sort(key=lambda e: e["ts"])
    for a, b in zip(evs, evs[1:]):
        # Microseconds printed to 3 decimals: allow a rounding's slack.
        assert a["ts"] + a["dur"] <= b["ts"] + 0.002, \
            "overlap on %r: %r and %r" % (lane, a, b)
if args.steps is not None:
    steps = sorted(e["args"]["step"] for e in complete)
    assert steps == list(range(args.steps)), steps
if args.simulated_ms is not None:
    end = max(e["ts"] + e["dur"] for e in complete) / 1e3
    assert abs(end - args.simulated_ms) <= 1e-6 * max(1.0, args.simulated_ms), \
        (end, args.simulated_ms)
print("trace ok: %d events on %d lanes" % (len(complete), len(lanes)))
