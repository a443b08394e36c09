#!/usr/bin/env python3
"""The front end's part of bench/check_logical_devices.sh: models of
python/tests/models.py compiled here for several GPUs and run there on one
through `einsummable.load(..., device_map=[0] * N)`, against the module.

  here:  python3 bench/check_logical_devices.py build DIR   # export, ein-compile --target=cuda
  there: python3 bench/check_logical_devices.py run DIR     # load with device_map, compare

`build` builds each model from a fixed seed, exports it once
(einsummable.export: the program and frontend.json) and compiles it for
each of DEVICES; the module's weights and the example input are saved
beside it (torch.save), so `run` compares with the very module whatever
PyTorch the GPU machine has. `run` loads each bundle bound to the module's
weights with a device map putting every device on GPU 0, checks that the
load warned that timings are not those of N GPUs, calls it and compares
with the module on the host: max|got - want| / max(1, max|want|) within
f32 1e-4, bf16 2e-2 (python/tests' tolerances). It prints one line per
bundle, as the shell script's table has them:

  NAME DEVICES MAP VERDICT MAX_REL_ERR
"""

import os
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

DEVICES = (2, 4)
TOLERANCE = {"float32": 1e-4, "bfloat16": 2e-2}


def _torch():
    import torch
    return torch


def build_model(name):
    """The module (eval mode, its dtype) and a function drawing its input."""
    torch = _torch()
    import models
    if name == "gpt2":
        return models.GPT2Block().eval(), lambda: torch.randn(2, 16, 64)
    if name == "llama":
        return models.LlamaBlock().eval(), lambda: torch.randn(2, 16, 64)
    if name == "llama-bf16":
        model = models.LlamaBlock(heads=8, kv_heads=2, repeat="expand")
        return (model.eval().to(torch.bfloat16),
                lambda: torch.randn(1, 16, 64).to(torch.bfloat16))
    if name == "causal-lm":
        return (models.CausalLM().eval(),
                lambda: torch.randint(0, 64, (2, 16), dtype=torch.int64))
    raise SystemExit("unknown model %r" % name)


MODELS = ("gpt2", "llama", "llama-bf16", "causal-lm")


def build(directory):
    torch = _torch()
    import einsummable
    compiler = os.environ.get("EIN_COMPILE",
                              os.path.join(ROOT, "build", "bin",
                                           "ein-compile"))
    failed = 0
    for name in MODELS:
        out = os.path.join(directory, name)
        os.makedirs(out, exist_ok=True)
        torch.manual_seed(11)
        model, draw = build_model(name)
        x = draw()
        exported = einsummable.export(model, (x,))
        exported.write(os.path.join(out, "model.mlir"),
                       os.path.join(out, "frontend.json"))
        torch.save(model.state_dict(), os.path.join(out, "state.pt"))
        torch.save(x, os.path.join(out, "input.pt"))
        for n in DEVICES:
            done = subprocess.run(
                [compiler, os.path.join(out, "model.mlir"), "-o",
                 os.path.join(out, "bundle-%d" % n), "--target=cuda",
                 "--devices=%d" % n], capture_output=True, text=True)
            ok = done.returncode == 0
            failed += not ok
            print("python %-12s %d devices: %s" % (
                name, n, "compiled" if ok else
                "FAILED\n" + (done.stderr or done.stdout)[-2000:]),
                flush=True)
        os.remove(os.path.join(out, "model.mlir"))
    return 1 if failed else 0


def error(got, want):
    torch = _torch()
    got, want = got.double(), want.double()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - want).abs().max() /
            want.abs().max().clamp(min=1)).item()


def run(directory):
    torch = _torch()
    import einsummable
    rows, wrong = [], 0
    for name in MODELS:
        out = os.path.join(directory, name)
        for n in DEVICES:
            bundle = os.path.join(out, "bundle-%d" % n)
            label = "python-%s-%d" % (name, n)
            device_map = [0] * n
            if not os.path.isdir(bundle):
                rows.append((label, n, ",".join(map(str, device_map)),
                             "MISSING", "-"))
                wrong += 1
                continue
            try:
                model, _ = build_model(name)
                model.load_state_dict(torch.load(
                    os.path.join(out, "state.pt")))
                x = torch.load(os.path.join(out, "input.pt"))
                with torch.no_grad():
                    want = model(x)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    compiled = einsummable.load(
                        bundle, model,
                        frontend=os.path.join(out, "frontend.json"),
                        device_map=device_map)
                notice = "logical devices %d on 1 GPU: timings are not " \
                         "those of %d GPUs" % (n, n)
                warned = any(issubclass(w.category,
                                        einsummable.LogicalDevicesWarning)
                             and str(w.message) == notice for w in caught)
                with torch.no_grad():
                    got = compiled(x)
                err = error(got, want)
                verdict = "ok" if err <= TOLERANCE[str(want.dtype)
                                                   .split(".")[-1]] \
                    else "WRONG"
                if not warned:
                    verdict = "NO-NOTICE"
                if compiled.gpus != 1 or compiled.devices != n:
                    verdict = "GPUS=%d" % compiled.gpus
                compiled.close()
                rows.append((label, n, ",".join(map(str, device_map)),
                             verdict, "%.3g" % err))
            except Exception as e:  # report and go on with the others
                rows.append((label, n, ",".join(map(str, device_map)),
                             "FAIL", "-"))
                print("%s: %s: %s" % (label, type(e).__name__,
                                      str(e)[:1500]), file=sys.stderr)
            wrong += rows[-1][3] != "ok"
            print(" ".join(str(c) for c in rows[-1]), flush=True)
    return 1 if wrong else 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "run"):
        raise SystemExit(__doc__)
    step, directory = sys.argv[1], sys.argv[2]
    sys.exit(build(directory) if step == "build" else run(directory))


if __name__ == "__main__":
    main()
