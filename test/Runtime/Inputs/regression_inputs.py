"""Inputs for steps.test's regression step (Inputs/regression-step.mlir),
and (--replay BUNDLE N) its N steps run one at a time through files: each
run's updated outputs become the next run's inputs by the manifest's
`updates` (the last argument: the ein-run to use). The replay must equal `ein-run --steps=N` bit for bit, and both
must equal SGD with momentum computed here in NumPy."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np

work = sys.argv[1]
names = ["x", "y", "w", "b", "lr", "zw", "zb"]
rng = np.random.default_rng(7)
values = {
    "x": rng.standard_normal((12, 6)), "y": rng.standard_normal((12, 3)),
    "w": 0.5 * rng.standard_normal((6, 3)), "b": 0.1 * rng.standard_normal(3),
    "lr": np.array(0.05), "zw": np.zeros((6, 3)), "zb": np.zeros(3),
}
if "--replay" not in sys.argv:
    for name in names:
        np.save(os.path.join(work, name + ".npy"),
                values[name].astype(np.float32))
    sys.exit(0)

bundle, steps = sys.argv[3], int(sys.argv[4])
manifest = json.load(open(os.path.join(bundle, "manifest.json")))
updates = [o.get("updates") for o in manifest["outputs"]]
inputs = [os.path.join(work, n + ".npy") for n in names]
ein_run = sys.argv[5] if len(sys.argv) > 5 else shutil.which("ein-run")
for step in range(steps):
    outputs = [os.path.join(work, "replay%d_%d.npy" % (step, k))
               for k in range(len(updates))]
    subprocess.run([ein_run, bundle, "--inputs=" + ",".join(inputs),
                    "--outputs=" + ",".join(outputs)], check=True,
                   stdout=subprocess.DEVNULL)
    for k, target in enumerate(updates):
        if target is not None:
            inputs[target] = outputs[k]
for k in range(len(updates)):
    carried = np.load(os.path.join(work, "o%d.npy" % k))
    replayed = np.load(outputs[k])
    assert carried.dtype == replayed.dtype and \
        (carried == replayed).all(), (k, carried, replayed)

# SGD with momentum 0.9 in float64, as torch.optim.SGD steps.
x, y = values["x"].astype(np.float32).astype(np.float64), \
    values["y"].astype(np.float32).astype(np.float64)
w = values["w"].astype(np.float32).astype(np.float64)
b = values["b"].astype(np.float32).astype(np.float64)
bw, bb = np.zeros_like(w), np.zeros_like(b)
for step in range(steps):
    e = x @ w + b - y
    loss = (e * e).sum() / 12
    gw, gb = 2 / 12 * x.T @ e, 2 / 12 * e.sum(0)
    bw, bb = 0.9 * bw + gw, 0.9 * bb + gb
    w, b = w - 0.05 * bw, b - 0.05 * bb
got = [np.load(os.path.join(work, "o%d.npy" % k)).astype(np.float64)
       for k in range(5)]
for name, have, want in [("loss", got[0], loss), ("w", got[1], w),
                         ("b", got[2], b), ("momentum w", got[3], bw),
                         ("momentum b", got[4], bb)]:
    error = np.abs(have - want).max() / max(1.0, np.abs(want).max())
    assert error < 1e-5, (name, error, have, want)
print("replayed %d steps: equal to --steps=%d and to NumPy's SGD"
      % (steps, steps))
