"""Prints the element types of a bundle's aggregate steps' inputs and
outputs: "N aggregate steps, inputs T[,T...], outputs T[,T...]"."""
import json
import sys

manifest = json.load(open(sys.argv[1]))
dtype = {b["name"]: b["type"]["dtype"] for b in manifest["buffers"]}
steps = [s for s in manifest["steps"] if s["kind"] == "aggregate"]
inputs = sorted({dtype[i] for s in steps for i in s["inputs"]})
outputs = sorted({dtype[s["output"]] for s in steps})
print("%d aggregate steps, inputs %s, outputs %s" %
      (len(steps), ",".join(inputs), ",".join(outputs)))
