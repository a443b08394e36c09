"""No silent wrong answers from ordinary use (issue 54): one `Compiled`
shared by threads, compiles in several threads at once, a `Compiled` used
after close(), and compiles that fail part way (a bad option, a full disk)
into a workdir that already holds a bundle. Results are compared with the
PyTorch modules themselves."""

import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE)
sys.path.insert(0, HERE)

import einsummable  # noqa: E402

TOLERANCE = 1e-4
THREADS = 4
CALLS = 200


def error(got, want):
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max().clamp(min=1)).item()


def mlp(inputs=16, hidden=32, outputs=8, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(),
                         nn.Linear(hidden, outputs)).eval()


def run_script(test, script, *args):
    """Runs `script` in a fresh interpreter (a crash there fails the test
    instead of ending the suite) and returns its standard output."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), PACKAGE, HERE]
        + list(args), capture_output=True, text=True, timeout=300)
    test.assertEqual(done.returncode, 0,
                     "the script ended with %d (a negative status is a "
                     "signal: -11 is SIGSEGV)\nstdout:\n%s\nstderr:\n%s"
                     % (done.returncode, done.stdout, done.stderr[-4000:]))
    return done.stdout


def hammer(test, compiled, model, threads=THREADS, calls=CALLS,
           bench=False):
    """`threads` threads call `compiled`, each `calls` times on an input of
    its own; every result must be the model's for that thread's input.
    With `bench`, one more thread runs bench() meanwhile."""
    inputs = [torch.randn(4, 16) for _ in range(threads)]
    with torch.no_grad():
        wants = [model(x) for x in inputs]
    problems = []
    start = threading.Barrier(threads + (1 if bench else 0))
    done = threading.Event()

    def caller(t):
        start.wait()
        for call in range(calls):
            try:
                got = compiled(inputs[t])
            except Exception as e:  # noqa: BLE001 - reported below
                problems.append("thread %d call %d: %r" % (t, call, e))
                continue
            if got.shape != wants[t].shape or \
                    error(got, wants[t]) > TOLERANCE:
                problems.append("thread %d call %d: not the model's output "
                                "for its input" % (t, call))

    def bencher():
        start.wait()
        while not done.is_set():
            try:
                test.assertGreater(compiled.bench(1, 2), 0)
            except Exception as e:  # noqa: BLE001 - reported below
                problems.append("bench: %r" % (e,))
                return

    workers = [threading.Thread(target=caller, args=(t,))
               for t in range(threads)]
    if bench:
        compiled(inputs[0])  # bench() runs on the last call's inputs
        extra = threading.Thread(target=bencher)
        extra.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    done.set()
    if bench:
        extra.join()
    test.assertEqual(problems[:10], [], "%d of %d calls went wrong"
                     % (len(problems), threads * calls))


class Threads(unittest.TestCase):
    """A `Compiled` (compiled or loaded) shared by threads: the calls on
    one object are serialized, each returns its own input's result."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="ein-threads-")
        cls.model = mlp()
        cls.compiled = einsummable.compile(
            cls.model, (torch.randn(4, 16),), devices=2,
            workdir=os.path.join(cls.dir.name, "mlp"))

    @classmethod
    def tearDownClass(cls):
        cls.compiled.close()
        cls.dir.cleanup()

    def setUp(self):
        torch.manual_seed(1)

    def test_threads_share_one_compiled(self):
        hammer(self, self.compiled, self.model)

    def test_threads_share_one_loaded_bundle(self):
        loaded = einsummable.load(self.compiled.bundle, self.model)
        try:
            hammer(self, loaded, self.model)
        finally:
            loaded.close()

    def test_one_loaded_object_per_thread(self):
        """Different objects (the same bundle loaded once per thread) run
        at the same time, each with its own inputs."""
        inputs = [torch.randn(4, 16) for _ in range(THREADS)]
        with torch.no_grad():
            wants = [self.model(x) for x in inputs]
        objects = [einsummable.load(self.compiled.bundle, self.model)
                   for _ in range(THREADS)]
        problems = []

        def caller(t):
            for call in range(CALLS):
                if error(objects[t](inputs[t]), wants[t]) > TOLERANCE:
                    problems.append("thread %d call %d" % (t, call))
        workers = [threading.Thread(target=caller, args=(t,))
                   for t in range(THREADS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for o in objects:
            o.close()
        self.assertEqual(problems[:10], [])

    def test_bench_while_threads_call(self):
        hammer(self, self.compiled, self.model, threads=2, calls=100,
               bench=True)


class CompileInThreads(unittest.TestCase):
    def test_threads_compile_at_once(self):
        """Two threads compile different models at the same moment (the
        traces are serialized); both bundles are right."""
        with tempfile.TemporaryDirectory(prefix="ein-compile-") as work:
            for round in range(3):
                results = {}
                start = threading.Barrier(2)

                def job(i):
                    try:
                        model = mlp(inputs=12 + 4 * i, hidden=24 + 8 * i,
                                    outputs=4 + i, seed=10 * round + i)
                        x = torch.randn(3, 12 + 4 * i)
                        start.wait()
                        compiled = einsummable.compile(
                            model, (x,), workdir=os.path.join(
                                work, "r%d-m%d" % (round, i)))
                        with torch.no_grad():
                            results[i] = error(compiled(x), model(x))
                        compiled.close()
                    except Exception as e:  # noqa: BLE001
                        results[i] = repr(e)
                threads = [threading.Thread(target=job, args=(i,))
                           for i in range(2)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                for i in range(2):
                    with self.subTest(round=round, model=i):
                        self.assertIsInstance(results[i], float, results[i])
                        self.assertLess(results[i], TOLERANCE)


CLOSE_SCRIPT = """
import os, sys, tempfile, torch
sys.path[:0] = sys.argv[1:3]
import einsummable
from test_reliability import mlp

model = mlp()
x = torch.randn(4, 16)
work = tempfile.mkdtemp(prefix="ein-close-")
compiled = einsummable.compile(model, (x,), workdir=work)
loaded = einsummable.load(compiled.bundle, model)
calls = {
    "__call__": lambda c: c(x),
    "bench": lambda c: c.bench(1, 2),
    "summary": lambda c: c.summary(),
    "explain": lambda c: c.explain(),
}
for name, c in (("compiled", compiled), ("loaded", loaded)):
    c(x)
    c.close()
    c.close()  # twice is harmless
    for method, call in calls.items():
        if method == "explain" and name == "loaded":
            continue  # a loaded bundle has no explanation, closed or not
        try:
            call(c)
        except RuntimeError as e:
            assert "is closed" in str(e), (name, method, str(e))
            print("%s.%s: RuntimeError: %s" % (name, method, e), flush=True)
        else:
            raise AssertionError("%s.%s() after close() did not raise"
                                 % (name, method))
print("ok")
"""

CLOSE_WHILE_CALLING_SCRIPT = """
import sys, threading, tempfile, torch
sys.path[:0] = sys.argv[1:3]
import einsummable
from test_reliability import mlp, error

model = mlp()
x = torch.randn(4, 16)
with torch.no_grad():
    want = model(x)
compiled = einsummable.compile(model, (x,), devices=2,
                               workdir=tempfile.mkdtemp(prefix="ein-close-"))
problems, closed, started = [], [0], threading.Barrier(4)

def caller():
    started.wait()
    for _ in range(2000):
        try:
            got = compiled(x)
        except RuntimeError as e:
            if "is closed" not in str(e):
                problems.append(repr(e))
            closed[0] += 1
            return
        if error(got, want) > 1e-4:
            problems.append("a wrong result")
    problems.append("never saw the close")

threads = [threading.Thread(target=caller) for _ in range(3)]
for t in threads:
    t.start()
started.wait()
for _ in range(20):
    compiled(x)
compiled.close()
for t in threads:
    t.join()
assert not problems, problems
print("ok", closed[0])
"""


class Close(unittest.TestCase):
    def test_every_method_after_close_raises(self):
        out = run_script(self, CLOSE_SCRIPT)
        self.assertIn("compiled.__call__: RuntimeError", out)
        self.assertIn("loaded.bench: RuntimeError", out)
        self.assertTrue(out.endswith("ok\n"), out)

    def test_close_while_threads_call(self):
        """Calls racing a close() get a result or the RuntimeError, never a
        crash or another's output."""
        out = run_script(self, CLOSE_WHILE_CALLING_SCRIPT)
        self.assertTrue(out.startswith("ok 3"), out)


def leftovers(work):
    """The entries of `work` that a compile stages or leaves half written:
    anything but the program, its description, the explanation, the
    constants and the bundle."""
    kept = {"bundle", "model.mlir", "frontend.json", "explain.json",
            "constants"}
    found = []
    for root, dirs, files in os.walk(work):
        for name in dirs + files:
            path = os.path.relpath(os.path.join(root, name), work)
            if root == work and name not in kept:
                found.append(path)
            elif name.endswith((".partial", ".tmp", ".old")):
                found.append(path)
    return sorted(found)


def snapshot(directory):
    """{relative path: bytes} of every file under `directory`."""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    return files


FULL_DISK_SCRIPT = """
import json, os, resource, signal, sys, tempfile, torch
sys.path[:0] = sys.argv[1:3]
import einsummable
from test_reliability import mlp, error, leftovers, snapshot

work, scratch = sys.argv[3], sys.argv[4]
first, second = mlp(seed=1), mlp(hidden=48, outputs=6, seed=2)
x = torch.randn(4, 16)
with torch.no_grad():
    want = first(x)
einsummable.compile(first, (x,), workdir=work).close()
before = snapshot(os.path.join(work, "bundle"))
# The sizes of the files a compile of `second` writes: a limit one byte
# below each makes the writes of that file and of every larger one fail,
# as a full disk would (EFBIG; SIGXFSZ ignored, ein-compile inherits both).
einsummable.compile(second, (x,), workdir=scratch).close()
sizes = sorted({os.path.getsize(os.path.join(root, name))
                for root, _, names in os.walk(scratch) for name in names})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
report = []
for limit in [0] + [s - 1 for s in sizes if s > 0]:
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (limit, resource.RLIM_INFINITY))
    try:
        einsummable.compile(second, (x,), workdir=work).close()
        outcome = "compiled"
    except Exception as e:
        outcome = type(e).__name__
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    entry = {"limit": limit, "outcome": outcome,
             "leftovers": leftovers(work)}
    if outcome == "compiled":
        # Everything fitted after all: the new bundle, whole.
        loaded = einsummable.load(os.path.join(work, "bundle"), second)
        with torch.no_grad():
            entry["error"] = error(loaded(x), second(x))
        loaded.close()
        einsummable.compile(first, (x,), workdir=work).close()
        before = snapshot(os.path.join(work, "bundle"))
    else:
        entry["bundle intact"] = \\
            snapshot(os.path.join(work, "bundle")) == before
        loaded = einsummable.load(os.path.join(work, "bundle"), first)
        with torch.no_grad():
            entry["error"] = error(loaded(x), want)
        loaded.close()
    report.append(entry)
print(json.dumps(report))
"""


class Staging(unittest.TestCase):
    """A failed compile leaves no staging directory or half-written file
    in workdir, and the bundle already there as it was."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-staging-")
        self.work = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def test_refused_option_keeps_the_bundle(self):
        model = mlp()
        x = torch.randn(4, 16)
        einsummable.compile(model, (x,), workdir=self.work).close()
        before = snapshot(os.path.join(self.work, "bundle"))
        with self.assertRaisesRegex(einsummable.CompileError, "remarks"):
            einsummable.compile(mlp(hidden=40, seed=3), (x,),
                                workdir=self.work, remarks="bogus")
        self.assertEqual(leftovers(self.work), [])
        self.assertEqual(snapshot(os.path.join(self.work, "bundle")), before)
        loaded = einsummable.load(os.path.join(self.work, "bundle"), model)
        with torch.no_grad():
            self.assertLess(error(loaded(x), model(x)), TOLERANCE)
        loaded.close()

    def test_compile_again_replaces_the_bundle(self):
        """A second compile into a workdir replaces its bundle whole (the
        constants and frontend.json of the new program with it), with the
        file system's atomic exchange and without it."""
        from unittest import mock
        x = torch.randn(4, 16)
        for exchange in (True, False):
            without = mock.patch.object(einsummable, "_exchange",
                                        lambda a, b: False)
            with self.subTest(exchange=exchange), \
                    (contextlib.nullcontext() if exchange else without):
                for seed, hidden in ((4, 32), (5, 40)):
                    model = mlp(hidden=hidden, seed=seed)
                    compiled = einsummable.compile(model, (x,),
                                                   workdir=self.work)
                    self.assertEqual(leftovers(self.work), [])
                    loaded = einsummable.load(
                        os.path.join(self.work, "bundle"), model)
                    with torch.no_grad():
                        self.assertLess(error(compiled(x), model(x)),
                                        TOLERANCE)
                        self.assertLess(error(loaded(x), model(x)),
                                        TOLERANCE)
                    self.assertEqual(compiled.explain()["devices"], 1)
                    # The summary names the bundle where it now is.
                    self.assertIn(os.path.join(self.work, "bundle:"),
                                  compiled.summary())
                    self.assertNotIn(".partial", compiled.summary())
                    compiled.close()
                    loaded.close()

    def test_full_disk_leaves_no_leftovers(self):
        import json
        work = os.path.join(self.work, "work")
        out = run_script(self, FULL_DISK_SCRIPT, work,
                         os.path.join(self.work, "scratch"))
        report = json.loads(out.strip().splitlines()[-1])
        self.assertTrue(any(e["outcome"] != "compiled" for e in report),
                        report)
        for entry in report:
            with self.subTest(limit=entry["limit"]):
                self.assertEqual(entry["leftovers"], [], entry)
                self.assertTrue(entry.get("bundle intact", True), entry)
                self.assertLess(entry["error"], TOLERANCE, entry)


if __name__ == "__main__":
    unittest.main()
