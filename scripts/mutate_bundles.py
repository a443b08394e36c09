#!/usr/bin/env python3
"""Mutates valid bundles and checks the runtime never trusts them blindly.

Each mutation of a bundle (or of how it is run) must be refused with a clear
error (exit 1, a line with "error:", no signal, no hang) or give outputs
bit-identical to the unmutated bundle's on the same inputs. Anything else
(a crash, a hang, exit 0 with other outputs) is a failure, printed with the
mutation that caused it.

Mutation kinds (docs/testing.md, issue 28):
  swap-kernels     swap the kernel names of two kernel steps
  dtype            change the element type of a kernel argument's buffer
  drop-step        drop one step (its dependents inherit its dependencies)
  alias            move a buffer onto another buffer's bytes
  drop-input-block drop one block of an input
  shrink-transfer  shrink one transfer region by one in one dimension
  truncate-library cut a kernel library in half
  zero-library     zero a kernel library's bytes after its header
  input-dev-zero   /dev/zero as an input
  input-fifo       a FIFO as an input
  input-directory  a directory as an input
  output-in-bundle --outputs onto a file of the bundle
  view-scalar      a view (view_of) of a buffer of several elements made a
                   scalar
  view-wider       a view's last dimension one wider
  view-narrower    a view's last dimension one narrower
  view-dtype       a view of another element type than its buffer's

The view kinds must be refused (their bundles may even give identical
outputs, where the view is not read, but the loader checks each view's
shape against the buffer it views). A wider or narrower view that still
holds whole rows of its buffer's last dimension is a valid view (of other
rows), and so is one inside one row of it: those two kinds pick only views
whose changed shape is neither.

usage:
  mutate_bundles.py --bin BUILD/bin BUNDLE... [--each] [--random N]
                    [--seed S] [--work DIR] [--timeout SECONDS]

--each applies every kind once to every bundle (the first applicable site,
and for steps every site of the kind); --random N applies N random single
mutations at random sites of random bundles (the property test). Prints one
line per mutation and a summary "N passed, N failed"; exits 1 on a failure.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile

DTYPES = ["f32", "f16", "bf16", "f64"]


class Case:
    """One mutation: how to make it and what to run."""

    def __init__(self, kind, site, bundle):
        self.kind, self.site, self.bundle = kind, site, bundle

    def __str__(self):
        return f"{self.kind}[{self.site}] of {self.bundle}"


def load(bundle):
    with open(os.path.join(bundle, "manifest.json")) as f:
        return json.load(f)


def save(bundle, manifest):
    with open(os.path.join(bundle, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


def kernel_steps(m):
    return [i for i, s in enumerate(m["steps"]) if s["kind"] == "kernel"]


def sites(kind, m):
    """The places `kind` can mutate in manifest `m` (empty: not applicable)."""
    steps = m["steps"]
    if kind == "swap-kernels":
        ks = kernel_steps(m)
        return [(a, b) for a in ks for b in ks
                if a < b and steps[a]["kernel"] != steps[b]["kernel"]]
    if kind == "dtype":
        return [(i, a) for i in kernel_steps(m)
                for a in range(len(steps[i]["args"]))]
    if kind == "drop-step":
        return list(range(len(steps)))
    if kind == "alias":
        bufs = m["buffers"]
        return [(x, y) for x in range(len(bufs)) for y in range(len(bufs))
                if x != y and bufs[x]["device"] == bufs[y]["device"]
                and bufs[x]["offset"] != bufs[y]["offset"]]
    if kind == "drop-input-block":
        return [(t, b) for t, layout in enumerate(m["inputs"])
                for b in range(len(layout["blocks"]))]
    if kind == "shrink-transfer":
        out = []
        for i, s in enumerate(steps):
            if s["kind"] != "transfer":
                continue
            regions = s.get("regions", [s])
            for r, region in enumerate(regions):
                extent = region.get("extent")
                if extent is None:
                    continue  # a whole-buffer copy: no extent to shrink
                out += [(i, r, d) for d, e in enumerate(extent) if e > 1]
        return out
    if kind in ("truncate-library", "zero-library"):
        return list(range(len(m.get("kernel_libraries", []))))
    if kind in ("input-dev-zero", "input-fifo", "input-directory"):
        return list(range(len(m["inputs"])))
    if kind.startswith("view-"):
        bufs = m["buffers"]
        by_name = {b["name"]: b for b in bufs}

        def elements(b):
            n = 1
            for d in b["type"]["shape"]:
                n *= d
            return n

        views = [i for i, b in enumerate(bufs) if "view_of" in b]
        if kind == "view-scalar":
            return [i for i in views
                    if elements(by_name[bufs[i]["view_of"]]) > 1]
        if kind in ("view-wider", "view-narrower"):
            # One column more or less that still holds whole rows of the
            # buffer's last dimension is another valid view (any shape of
            # whole rows is): only the others are wrong views.
            def wrong(b):
                shape = b["type"]["shape"]
                if not shape or (kind == "view-narrower" and shape[-1] <= 1):
                    return False
                last = shape[-1] + (1 if kind == "view-wider" else -1)
                count = elements(b) // shape[-1] * last
                root = by_name[b["view_of"]]
                row = root["type"]["shape"][-1] if root["type"]["shape"] else 1
                size = {"f64": 8, "f32": 4, "i64": 8, "i32": 4}.get(
                    b["type"]["dtype"], 2 if b["type"]["dtype"] in
                    ("f16", "bf16", "i16") else 1)
                first = (b.get("offset", 0) - root.get("offset", 0)) // size
                # Part of one row, or whole rows: a valid view still.
                return not (first % row + count <= row or count % row == 0)
            return [i for i in views if wrong(bufs[i])]
        return views
    if kind == "output-in-bundle":
        return ["manifest.json", "program.json"] + [
            lib for lib in m.get("kernel_libraries", [])]
    raise ValueError(kind)


KINDS = ["swap-kernels", "dtype", "drop-step", "alias", "drop-input-block",
         "shrink-transfer", "truncate-library", "zero-library",
         "input-dev-zero", "input-fifo", "input-directory",
         "output-in-bundle", "view-scalar", "view-wider", "view-narrower",
         "view-dtype"]

# Kinds that must be refused: identical outputs are not enough.
MUST_REFUSE = {"view-scalar", "view-wider", "view-narrower", "view-dtype"}


def drop_step(m, victim):
    steps = m["steps"]
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


def mutate(case, work, inputs):
    """Builds the mutated bundle in `work`; returns (bundle, inputs, outputs
    directory override or None)."""
    bundle = os.path.join(work, "bundle")
    shutil.copytree(case.bundle, bundle)
    m = load(bundle)
    k, site = case.kind, case.site
    args = list(inputs)
    outputs = None
    if k == "swap-kernels":
        a, b = site
        sa, sb = m["steps"][a], m["steps"][b]
        sa["kernel"], sb["kernel"] = sb["kernel"], sa["kernel"]
    elif k == "dtype":
        i, a = site
        name = m["steps"][i]["args"][a]["buffer"]
        buf = next(b for b in m["buffers"] if b["name"] == name)
        old = buf["type"]["dtype"]
        buf["type"]["dtype"] = DTYPES[(DTYPES.index(old) + 1) % len(DTYPES)] \
            if old in DTYPES else "f32"
    elif k == "drop-step":
        drop_step(m, site)
    elif k == "alias":
        x, y = site
        m["buffers"][x]["offset"] = m["buffers"][y]["offset"]
    elif k == "drop-input-block":
        t, b = site
        del m["inputs"][t]["blocks"][b]
    elif k == "shrink-transfer":
        i, r, d = site
        step = m["steps"][i]
        region = step["regions"][r] if "regions" in step else step
        region["extent"][d] -= 1
    elif k in ("truncate-library", "zero-library"):
        path = os.path.join(bundle, m["kernel_libraries"][site])
        with open(path, "rb") as f:
            data = f.read()
        if k == "truncate-library":
            data = data[:len(data) // 2]
        else:
            data = data[:64] + bytes(len(data) - 64)
        with open(path, "wb") as f:
            f.write(data)
    elif k == "input-dev-zero":
        args[site] = "/dev/zero"
    elif k == "input-fifo":
        fifo = os.path.join(work, "fifo.npy")
        os.mkfifo(fifo)
        args[site] = fifo
    elif k == "input-directory":
        args[site] = work
    elif k == "output-in-bundle":
        outputs = [os.path.join(bundle, site)]
    elif k.startswith("view-"):
        t = m["buffers"][site]["type"]
        if k == "view-scalar":
            t["shape"] = []
        elif k == "view-wider":
            t["shape"][-1] += 1
        elif k == "view-narrower":
            t["shape"][-1] -= 1
        else:
            old = t["dtype"]
            t["dtype"] = DTYPES[(DTYPES.index(old) + 1) % len(DTYPES)] \
                if old in DTYPES else "f32"
    save(bundle, m) if k not in (
        "truncate-library", "zero-library", "input-dev-zero", "input-fifo",
        "input-directory", "output-in-bundle") else None
    return bundle, args, outputs


def run(binary, bundle, inputs, outputs, timeout):
    cmd = [binary, bundle]
    if inputs:
        cmd.append("--inputs=" + ",".join(inputs))
    if outputs:
        cmd.append("--outputs=" + ",".join(outputs))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "timed out after %ds" % timeout


def baseline(bins, bundle, work, timeout):
    """Inputs drawn once (ein-eval --save-inputs) and the bundle's outputs on
    them, as bytes."""
    program = os.path.join(bundle, "program.json")
    with open(program) as f:
        p = json.load(f)
    inputs = [os.path.join(work, f"in{i}.npy")
              for i in range(len(p["arguments"]))]
    outputs = [os.path.join(work, f"out{i}.npy")
               for i in range(len(p["results"]))]
    subprocess.run([os.path.join(bins, "ein-eval"), program,
                    "--save-inputs=" + ",".join(inputs), "--seed=7"],
                   check=True, capture_output=True, timeout=timeout)
    rc, text = run(os.path.join(bins, "ein-run"), bundle, inputs, outputs,
                   timeout)
    if rc != 0:
        sys.exit(f"mutate_bundles.py: the unmutated {bundle} does not run: "
                 f"{text}")
    return inputs, [open(o, "rb").read() for o in outputs]


def check(case, bins, inputs, expected, timeout):
    """Returns (None, "refused: ..." or "identical") when the mutation is
    handled, else (why it is not, output)."""
    with tempfile.TemporaryDirectory(prefix="ein-mutate-") as work:
        bundle, args, outputs = mutate(case, work, inputs)
        written = outputs or [os.path.join(work, f"got{i}.npy")
                              for i in range(len(expected))]
        rc, text = run(os.path.join(bins, "ein-run"), bundle, args, written,
                       timeout)
        if rc is None:
            return text, ""
        if rc < 0 or rc > 128:
            sig = -rc if rc < 0 else rc - 128
            return f"killed by signal {sig} ({signal.Signals(sig).name})", text
        if rc != 0:
            error = [l for l in text.splitlines() if "error:" in l]
            if rc == 1 and error:
                return None, "refused: " + error[0][:160]
            return f"exit {rc} without a clear error", text
        if outputs:
            return "exit 0 writing an output into the bundle", text
        if case.kind in MUST_REFUSE:
            return "exit 0: a view of the wrong shape or type must be " \
                   "refused", text
        got = [open(o, "rb").read() for o in written]
        if got != expected:
            return "exit 0 with outputs that differ from the bundle's", text
        return None, "identical"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundles", nargs="+")
    parser.add_argument("--bin", required=True,
                        help="the directory holding ein-run and ein-eval")
    parser.add_argument("--each", action="store_true")
    parser.add_argument("--random", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--verbose", action="store_true",
                        help="print every mutation's outcome")
    parser.add_argument("--max-sites", type=int, default=6,
                        help="with --each, at most this many sites per kind "
                             "and bundle (spread over all of them)")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)

    bases = {}
    keep = tempfile.mkdtemp(prefix="ein-mutate-base-")
    try:
        for i, b in enumerate(opts.bundles):
            d = os.path.join(keep, str(i))
            os.makedirs(d)
            bases[b] = baseline(opts.bin, b, d, opts.timeout)
        cases = []
        if opts.each:
            for b in opts.bundles:
                m = load(b)
                for kind in KINDS:
                    s = sites(kind, m)
                    if len(s) > opts.max_sites:
                        step = len(s) / opts.max_sites
                        s = [s[int(j * step)] for j in range(opts.max_sites)]
                    cases += [Case(kind, site, b) for site in s]
        for _ in range(opts.random):
            b = rng.choice(opts.bundles)
            m = load(b)
            kinds = [k for k in KINDS if sites(k, m)]
            kind = rng.choice(kinds)
            cases.append(Case(kind, rng.choice(sites(kind, m)), b))
        passed = failed = refused = 0
        for case in cases:
            inputs, expected = bases[case.bundle]
            why, what = check(case, opts.bin, inputs, expected, opts.timeout)
            if why is None:
                passed += 1
                refused += what.startswith("refused")
                if opts.verbose:
                    print(f"ok {case}: {what}", flush=True)
            else:
                failed += 1
                print(f"FAIL {case}: {why}\n  {what.strip()[:400]}",
                      flush=True)
        print(f"mutations: {refused} refused, {passed - refused} with "
              f"bit-identical outputs")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    finally:
        shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
