"""Einsummable from Python: PyTorch models in, bundles out.

    import torch, einsummable
    model = MyBlock().eval()
    compiled = einsummable.compile(model, (x,), devices=4)
    y = compiled(x)                     # as model(x), planned over 4 devices

`compile` traces the model (make_fx), writes it as linalg on tensors, runs
`ein-compile` on it and loads the bundle through the runtime's C API.
`load` binds a bundle compiled elsewhere to a model's weights. docs/
frontend.md has the op table, how weights are bound and the limits.

A `Compiled` may be shared by threads: its calls are serialized. After
close() every method raises RuntimeError. Compiles may run in several
threads at once (their traces are serialized).
"""

import ctypes
import errno
import inspect
import json
import numbers
import os
import shutil
import subprocess
import tempfile
import re
import threading
import warnings
import weakref

import torch

from . import _export, _runtime, _tools
from ._errors import CompileError, FrontendError
from ._export import export

__all__ = ["compile", "load", "export", "compile_training", "load_training",
           "Compiled", "Trainer", "CompileError", "FrontendError",
           "CompileRemark", "LogicalDevicesWarning", "Outputs"]


class Outputs(dict):
    """The results of a model that returns a mapping (transformers'
    ModelOutput): read as the model's were, by key (`out["logits"]`), by
    attribute (`out.logits`) or by position (`out[0]`, the first field the
    model set)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return list(self.values())[key]
        return dict.__getitem__(self, key)

    def to_tuple(self):
        return tuple(self.values())


class CompileRemark(UserWarning):
    """What ein-compile remarked while compiling (an attention that almost
    fused, and why not): the program is right, but slower than it could
    be."""


class LogicalDevicesWarning(UserWarning):
    """A bundle loaded with a device map that puts several of its devices
    on one GPU (`load(..., device_map=[0, 0])`): it computes what it would
    on as many GPUs, but its timings are not theirs."""


_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
           "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
           "i1": torch.bool}


def _dtype(name):
    return _DTYPES[name]


class Compiled:
    """A loaded bundle that is called like the model it came from.

    One object may be shared by threads: a call sets the inputs, runs and
    reads the outputs under the object's lock, so concurrent calls run one
    after another, each with its own inputs and results (bench() and
    close() take the same lock). After close() every method raises
    RuntimeError; closing twice does nothing."""

    def __init__(self, bundle, description, weights, mlir=None, summary="",
                 explain_path=None, device_map=None):
        self._lock = threading.RLock()
        self._scratch = None
        self.bundle = os.path.abspath(bundle)
        self.mlir = mlir
        self._summary = summary
        self._explain = explain_path
        self._description = description
        self._args = description["arguments"]
        self._outputs = description["outputs"]
        self._runtime = _runtime.Bundle(self.bundle, device_map=device_map)
        devices, gpus = self._runtime.devices, self._runtime.gpus
        if 0 < gpus < devices:
            warnings.warn("logical devices %d on %d GPU%s: timings are not "
                          "those of %d GPUs" % (devices, gpus,
                                                "" if gpus == 1 else "s",
                                                devices),
                          LogicalDevicesWarning, stacklevel=3)
        if len(self._runtime.inputs) != len(self._args):
            raise FrontendError(
                "the bundle has %d inputs but frontend.json describes %d "
                "arguments" % (len(self._runtime.inputs), len(self._args)))
        for i, (info, arg) in enumerate(zip(self._runtime.inputs,
                                            self._args)):
            if info.dtype != arg["dtype"] or list(info.shape) != arg["shape"]:
                raise FrontendError(
                    "bundle input %d is %r, frontend.json says %s %s (%s)"
                    % (i, info, arg["dtype"], arg["shape"], arg["name"]))
        self._inputs = [i for i, a in enumerate(self._args)
                        if a["kind"] == "input"]
        self._called = False
        # Weights are set once: they stay on the devices between calls.
        for index, tensor in weights.items():
            self._set(index, tensor)

    @property
    def target(self):
        return self._runtime.target

    @property
    def devices(self):
        return self._runtime.devices

    @property
    def gpus(self):
        """The distinct GPUs the devices run on: `devices`, unless
        load(..., device_map=...) put several on one GPU; 0 on the cpu
        target."""
        return self._runtime.gpus

    @property
    def rank(self):
        """This process's rank: 0 unless mpirun started one process per
        node of a bundle for several (docs/distributed.md)."""
        return self._runtime.rank

    @property
    def ranks(self):
        """The processes running the bundle together (1 without mpirun)."""
        return self._runtime.ranks

    @property
    def flops(self):
        """The floating-point operations of one call, as the compiler
        counts them (a multiply-add 2; docs/bundle-format.md, "FLOPs"):
        with bench()'s milliseconds, the achieved rate."""
        return self._runtime.flops

    @property
    def peak_flops(self):
        """The chip table's bf16 gemm rate of all the bundle's GPUs
        (FLOP/s; 0 on the cpu target)."""
        return self._runtime.peak_flops

    @staticmethod
    def _host(tensor):
        """`tensor` as contiguous host memory the runtime can copy from."""
        t = tensor.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        return t.contiguous()

    def _set(self, index, tensor):
        t = self._host(tensor)
        with self._lock:
            self._open()
            self._runtime.set_input(index, t.data_ptr(),
                                    t.numel() * t.element_size())

    def _open(self):
        """Raises once the bundle is closed (the runtime would be handed a
        NULL bundle). Called holding self._lock."""
        if self._runtime.closed:
            raise RuntimeError("this compiled model (bundle %s) is closed"
                               % self.bundle)

    def __call__(self, *inputs):
        if len(inputs) != len(self._inputs):
            raise TypeError("the model takes %d inputs, got %d"
                            % (len(self._inputs), len(inputs)))
        device = None
        for position, (index, x) in enumerate(zip(self._inputs, inputs)):
            arg = self._args[index]
            if not isinstance(x, torch.Tensor):
                raise TypeError("input %d is a %s, not a tensor"
                                % (position, type(x).__name__))
            dtype = _dtype(arg["dtype"])
            if x.dtype != dtype:
                raise TypeError("input %d is %s; the model was compiled for "
                                "%s" % (position, x.dtype, dtype))
            if list(x.shape) != arg["shape"]:
                raise ValueError("input %d has shape %s; the model was "
                                 "compiled for %s" % (position,
                                                      list(x.shape),
                                                      arg["shape"]))
            if x.device.type != "cpu":
                device = x.device
        hosted = [(index, self._host(x))
                  for index, x in zip(self._inputs, inputs)]
        results = [torch.empty(info.shape, dtype=_dtype(info.dtype))
                   for info in self._runtime.outputs]
        # Setting the inputs, the run and reading the outputs are one step:
        # another thread's call must not set its inputs between them.
        with self._lock:
            self._open()
            for index, t in hosted:
                self._runtime.set_input(index, t.data_ptr(),
                                        t.numel() * t.element_size())
            self._runtime.run()
            self._called = True
            if self._runtime.rank != 0:
                # Another rank of a run over several processes: the outputs
                # are gathered into rank 0, and this one has none.
                for i in range(len(self._runtime.outputs)):
                    self._runtime.get_output(i, 0, 0)
                return None
            for i, info in enumerate(self._runtime.outputs):
                self._runtime.get_output(i, results[i].data_ptr(),
                                         info.bytes)
        if device is not None:
            results = [out.to(device) for out in results]
        kind = self._outputs["kind"]
        if kind == "tensor":
            return results[0]
        if kind == "dict":
            return Outputs(zip(self._outputs["names"], results))
        return tuple(results) if kind == "tuple" else results

    def bench(self, warmup=10, iters=100):
        """Median milliseconds of one step by the runtime's timer, on the
        inputs of the last call."""
        with self._lock:
            self._open()
            if not self._called:
                raise RuntimeError("call the model once before bench(): a "
                                   "step runs on the inputs of the last call")
            return self._runtime.bench(warmup, iters)

    def summary(self):
        """The table ein-compile printed."""
        with self._lock:
            self._open()
            return self._summary

    def explain(self):
        """The plan's explanation (docs/explain.md) as a dict."""
        with self._lock:
            self._open()
        if not self._explain or not os.path.exists(self._explain):
            raise FrontendError("this bundle was loaded, not compiled here: "
                                "it has no explanation")
        with open(self._explain) as f:
            return json.load(f)

    def close(self):
        """Frees the bundle (its memory on the devices). Waits for a call
        in flight on another thread; a second close() does nothing. The
        temporary directory of a compile that named no `workdir` (the
        program, the bundle, the plan's explanation) goes with it."""
        with self._lock:
            self._runtime.close()
            if self._scratch is not None:
                self._scratch()

    def _own(self, directory):
        """Makes `directory` (a compile's temporary workdir) this object's:
        removed by close(), or when the object is collected or the
        interpreter exits."""
        self._scratch = weakref.finalize(self, shutil.rmtree, directory,
                                         True)


def _weights_for(description, model, directory):
    """{argument index: tensor} for every weight argument: the model's
    parameters and buffers by name (none without a model), trace constants
    from their files."""
    from ._trace import weights_of
    unique, names = weights_of(model) if model is not None else ([], {})
    by_name = {name: unique[i][1] for name, i in names.items()}
    bound = {}
    for index, arg in enumerate(description["arguments"]):
        if arg["kind"] != "weight":
            continue
        if "file" in arg:
            bound[index] = _export.read_raw(
                os.path.join(directory, arg["file"]), arg["shape"],
                _dtype(arg["dtype"]))
            continue
        if model is None:
            continue
        if arg["name"] not in by_name:
            raise FrontendError(
                "the bundle's weight '%s' is not a parameter or buffer of "
                "the model" % arg["name"])
        t = by_name[arg["name"]]
        if list(t.shape) != arg["shape"] or t.dtype != _dtype(arg["dtype"]):
            raise FrontendError(
                "weight '%s' is %s %s in the model but %s %s in the bundle"
                % (arg["name"], t.dtype, list(t.shape), arg["dtype"],
                   arg["shape"]))
        bound[index] = t
    return bound


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a, b):
    """Swaps the paths `a` and `b` in one step (Linux renameat2
    RENAME_EXCHANGE); False where the C library or file system cannot, or
    `b` does not exist."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                          ctypes.c_char_p, ctypes.c_uint]
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b),
                     _RENAME_EXCHANGE) == 0


def _install(source, destination, scratch):
    """Puts the complete directory `source` in `destination`'s place, so
    that `destination` always names a whole bundle, the old one or the new
    one. What was there ends up in `scratch` (the caller removes it)."""
    if _exchange(source, destination):
        return  # `source` now names the old bundle
    try:
        os.rename(source, destination)  # nothing there (or an empty dir)
        return
    except OSError as error:
        if error.errno not in (errno.ENOTEMPTY, errno.EEXIST,
                               errno.ENOTDIR, errno.EISDIR):
            raise
    # No atomic exchange here: the old one aside, the new one in.
    old = os.path.join(scratch, "old")
    os.rename(destination, old)
    try:
        os.rename(source, destination)
    except BaseException:
        os.rename(old, destination)
        raise


def _stage_name(workdir):
    """A fresh directory in `workdir` that one compile assembles its bundle
    in (ein-compile's own staging directory is inside it)."""
    return tempfile.mkdtemp(prefix=".bundle-", suffix=".partial",
                            dir=workdir)


# -- arguments, checked as ein-compile checks its flags ----------------------

_SIZE = re.compile(r"([0-9.]*)(.*)", re.S)
_UNITS = {"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9,
          "TB": 1e12, "KiB": 1024.0, "MiB": 2.0 ** 20, "GiB": 2.0 ** 30,
          "TiB": 2.0 ** 40}
_MAX_BYTES = 9.0e18


def _type_name(value):
    return type(value).__name__


def _memory_bytes(value):
    """`memory_limit` as bytes (None: no limit): an int of bytes, or a
    string as ein-compile's --memory-limit takes it ("512MiB", "80GiB",
    "1.5GB", "64kB", "4096")."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError("memory_limit must be an int of bytes or a size "
                        "such as \"40GiB\", not %s %r"
                        % (_type_name(value), value))
    if isinstance(value, int):
        if value < 1 or value > _MAX_BYTES:
            raise ValueError("memory_limit must be at least one byte (None "
                             "for no limit), got %d" % value)
        return value
    number, unit = _SIZE.fullmatch(value).groups()
    unit = unit.strip()
    try:
        amount = float(number)
    except ValueError:
        raise ValueError("memory_limit %r is not a size (bytes, or a number "
                         "with a unit: 512MiB, 80GiB, 1.5GB)" % value) \
            from None
    if unit not in _UNITS:
        raise ValueError("memory_limit %r has an unknown unit %r (B, kB, MB, "
                         "GB, TB, KiB, MiB, GiB, TiB)" % (value, unit))
    size = amount * _UNITS[unit]
    if size < 1 or size > _MAX_BYTES:
        raise ValueError("memory_limit %r is out of range: give at least one "
                         "byte (None for no limit)" % value)
    return int(size)


def _path(name, value, optional=False):
    """A path argument (str or os.PathLike) as a str."""
    if value is None and optional:
        return None
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError("%s must be a path (str or os.PathLike)%s, not %s %r"
                    % (name, ", or None" if optional else "",
                       _type_name(value), value))


def _device_map(value):
    """load()'s device_map: None, or a list (or tuple) of GPU indices, ints
    of 0 or more, as a list of ints. TypeError for a wrong type, ValueError
    for a value out of range, each naming the argument. Whether it has one
    entry per device and names GPUs that exist is the runtime's to say
    (also a ValueError naming device_map)."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise TypeError("device_map must be a list of GPU indices (ints, 0 "
                        "or more), one per device of the bundle, such as "
                        "[0, 0, 0, 0]; not %s %r" % (_type_name(value), value))
    if not value:
        raise ValueError("device_map is empty: give one GPU index per "
                         "device of the bundle (None: device d on GPU d)")
    gpus = []
    for i, gpu in enumerate(value):
        if isinstance(gpu, bool) or not isinstance(gpu, numbers.Integral):
            raise TypeError("device_map[%d] must be an int (a GPU index), "
                            "not %s %r" % (i, _type_name(gpu), gpu))
        if not 0 <= gpu < 2 ** 31:
            raise ValueError("device_map[%d] is %d: a GPU index is 0 or more"
                             % (i, gpu))
        gpus.append(int(gpu))
    return gpus


# Keywords of compile() that are paths as well as strings.
_PATH_KEYWORDS = ("topology", "cuda_toolkit")


def _check_compile_arguments(arguments):
    """Refuses, before anything is traced, what ein-compile would refuse
    or read otherwise (2.5 devices, a bool for an int): TypeError for a
    wrong type, ValueError for a value out of range, each naming the
    argument. Returns the arguments normalized (paths as str, memory_limit
    in bytes)."""
    checked = dict(arguments)
    devices = arguments["devices"]
    if isinstance(devices, bool) or not isinstance(devices, int):
        raise TypeError("devices must be an int, not %s %r"
                        % (_type_name(devices), devices))
    if not 1 <= devices <= 64:
        raise ValueError("devices must be 1 to 64, got %d" % devices)
    checked["memory_limit"] = _memory_bytes(arguments["memory_limit"])
    checked["workdir"] = _path("workdir", arguments["workdir"],
                               optional=True)
    extra = arguments["extra_args"]
    if isinstance(extra, (str, bytes)) or not isinstance(
            extra, (list, tuple)) or not all(isinstance(a, str)
                                             for a in extra):
        raise TypeError("extra_args must be a list or tuple of strings "
                        "(ein-compile's flags as they are), not %r"
                        % (extra,))
    # The flags: the type of compile()'s default (ein-compile's).
    for keyword, parameter in inspect.signature(compile).parameters.items():
        default = parameter.default
        if keyword not in arguments or keyword in (
                "devices", "memory_limit", "workdir", "extra_args") or \
                default is None:
            continue
        value = arguments[keyword]
        if keyword in _PATH_KEYWORDS:
            checked[keyword] = _path(keyword, value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise TypeError("%s must be a bool (True or False), not %s "
                                "%r" % (keyword, _type_name(value), value))
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("%s must be an int, not %s %r"
                                % (keyword, _type_name(value), value))
        elif isinstance(default, str):
            if not isinstance(value, str):
                raise TypeError("%s must be a str, not %s %r"
                                % (keyword, _type_name(value), value))
    if not 0 <= arguments["seed"] < 2 ** 64:
        raise ValueError("seed must be 0 to 2**64 - 1, got %d"
                         % arguments["seed"])
    if arguments["state_cap"] < 1:
        raise ValueError("state_cap must be at least 1, got %d"
                         % arguments["state_cap"])
    if arguments["search_budget"] < 0:
        raise ValueError("search_budget must be 0 (none) or more, got %d"
                         % arguments["search_budget"])
    return checked


def compile(model, example_inputs, *, devices=1, target="cpu",
            topology="nvswitch", strategy="optimal", memory_limit=None,
            tie_layout=False, workdir=None, chip="sm_90",
            exchange="synthesized", partials="acc", stages="off",
            compute="auto", weights_replicable=True, approx_math=True,
            seed=0, state_cap=131072, search_budget=10000000,
            allow_inexact=False, exact=False,
            batch_transfers=True, gemm_epilogues=True, attention_views=True,
            cuda_toolkit="/usr/local/cuda", remarks="missed", extra_args=()):
    """Traces `model` on `example_inputs`, plans it over `devices` and
    returns a `Compiled` callable like the model. The program, the bundle
    and the plan's explanation are kept in `workdir` (a new temporary
    directory by default).

    Every other keyword is the ein-compile flag of its name (`state_cap`:
    `--state-cap`), with ein-compile's default (docs/frontend.md): the
    topology, the chip, the exchange programs, partial sums' precision
    ("acc" or "out"), stages ("off", "auto", "SxM" on several nodes or "1xM"
    chunks, docs/distributed.md and docs/physical.md), the planner's compute
    term ("auto": kernels for cuda, flops for cpu), whether weights may be
    replicated, the approximate math of f16/bf16 GPU kernels, the seed of
    strategy="random", the search's state cap, its budget of state
    expansions (the cap is raised from 4096 toward state_cap while it
    fits; 0: none) and `exact` (refuse a plan the cap made inexact, instead
    of keeping it with a warning), batched
    transfers, gemm epilogues, attention views, the CUDA toolkit and
    remarks ("missed" or "none"). `memory_limit` is what a GPU may hold:
    bytes, or a size as ein-compile takes it ("40GiB", "512MiB", "1.5GB";
    None: no limit); `extra_args` are passed to ein-compile as they are.
    Arguments of the wrong type (a bool or 2.5 for `devices`, a string for
    a bool) raise TypeError, values out of range ValueError, each naming
    the argument, before anything is traced.

    Without a `workdir`, the files live in a temporary directory that
    close() removes (or the object's collection, or the interpreter's
    exit): name one to keep them."""
    # Every keyword, as given (a flag added to the signature is checked and
    # passed on with the others).
    keywords = dict(locals())
    del keywords["model"], keywords["example_inputs"]
    checked = _check_compile_arguments(keywords)
    exported = export(model, example_inputs)
    if checked["workdir"] is None:
        # The compile's own: removed on failure, else when the Compiled
        # closes.
        scratch = tempfile.mkdtemp(prefix="einsummable-")
        try:
            compiled = _compile_into(exported, scratch, checked)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        compiled._own(scratch)
        return compiled
    return _compile_into(exported, checked["workdir"], checked)


def _compile_into(exported, workdir, checked):
    """compile()'s work once traced: the program, the bundle and the
    explanation written into `workdir`, the bundle loaded."""
    workdir = os.path.abspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    mlir = os.path.join(workdir, "model.mlir")
    description_path = os.path.join(workdir, "frontend.json")
    exported.write(mlir, description_path)
    description = exported.description()
    bundle = os.path.join(workdir, "bundle")
    explain = os.path.join(workdir, "explain.json")
    # The bundle is staged once: ein-compile writes it into a directory of
    # this compile's own (where it stages it itself), frontend.json and the
    # constants join it there, and it then takes `bundle`'s place whole. On
    # any failure the staging directory goes, with whatever ein-compile left
    # in it, and `bundle` stays as it was.
    staging = _stage_name(workdir)
    flags = ("devices", "target", "strategy", "memory_limit", "extra_args",
             "workdir")
    try:
        staged = os.path.join(staging, "bundle")
        staged_explain = os.path.join(staging, "explain.json")
        summary = _run_ein_compile(
            mlir, staged, staged_explain, devices=checked["devices"],
            target=checked["target"], strategy=checked["strategy"],
            memory_limit=checked["memory_limit"],
            extra_args=checked["extra_args"],
            given={k: v for k, v in checked.items() if k not in flags})
        _copy_description(description, workdir, staged)
        _install(staged, bundle, staging)
        if os.path.exists(staged_explain):
            os.replace(staged_explain, explain)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    weights = {i: a["tensor"] for i, a in enumerate(exported.arguments)
               if a["kind"] == "weight"}
    # The summary names the bundle where ein-compile wrote it.
    summary = summary.replace(staged, bundle)
    return Compiled(bundle, description, weights, mlir=mlir,
                    summary=summary, explain_path=explain)


def _copy_description(description, workdir, bundle):
    """Puts workdir's frontend.json and the constants `description`'s
    arguments name (not whatever an earlier compile left in
    workdir/constants) into `bundle`, so it binds on its own (load)."""
    shutil.copyfile(os.path.join(workdir, "frontend.json"),
                    os.path.join(bundle, "frontend.json"))
    for arg in description["arguments"]:
        if "file" in arg:
            target_file = os.path.join(bundle, arg["file"])
            os.makedirs(os.path.dirname(target_file), exist_ok=True)
            shutil.copyfile(os.path.join(workdir, arg["file"]), target_file)


def _run_ein_compile(mlir, output, explain, *, devices, target, strategy,
                     memory_limit, extra_args, given):
    """Runs ein-compile on `mlir` into the bundle `output`; returns what it
    printed, raises CompileError with its diagnostic, warns its remarks."""
    command = [_tools.tool("ein-compile"), mlir, "-o", output,
               "--target=%s" % target, "--devices=%d" % devices,
               "--strategy=%s" % strategy, "--explain=%s" % explain]
    if memory_limit is not None:
        command.append("--memory-limit=%d" % memory_limit)
    # The other flags, where they differ from ein-compile's defaults (this
    # signature's, which python/tests/test_options.py holds to them).
    defaults = inspect.signature(compile).parameters
    for keyword, value in given.items():
        if value is None or value == defaults[keyword].default:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        command.append("--%s=%s" % (keyword.replace("_", "-"), value))
    command += list(extra_args)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(done.stderr.strip() or done.stdout.strip())
    for line in done.stderr.splitlines():
        # Remarks, and warnings such as a plan past the search's state cap
        # (not proven optimal), reach the caller as Python warnings.
        if "remark:" in line or "warning:" in line:
            # Attributed to compile()'s caller.
            warnings.warn(line, CompileRemark, stacklevel=4)
    return done.stdout


def load(bundle, model=None, frontend=None, device_map=None):
    """The `Compiled` of a bundle compiled elsewhere, bound to `model`'s
    parameters and buffers by name. The description of the arguments is the
    bundle's frontend.json (`compile` puts it there) or `frontend`, the
    file `python3 -m einsummable export` wrote beside the program. `model`
    may be omitted when the program has no weights. A `bundle` or
    `frontend` that is not a path, or a `model` that is not an
    nn.Module (or a function), raises TypeError; a `bundle` that is not a
    directory FileNotFoundError.

    `device_map` runs a CUDA bundle's device d on GPU device_map[d]
    (docs/cuda-runtime.md, "Logical devices"): `[0, 0, 0, 0]` runs a bundle
    for 4 GPUs on GPU 0, each device with its own memory and streams there,
    and warns (LogicalDevicesWarning) that its timings are not those of 4
    GPUs. Not a list of ints: TypeError; a negative entry, an empty list,
    a length other than the bundle's devices, a GPU CUDA does not see, or
    a map for a cpu bundle: ValueError naming device_map."""
    bundle = _path("bundle", bundle)
    frontend = _path("frontend", frontend, optional=True)
    device_map = _device_map(device_map)
    if model is not None and not (isinstance(model, torch.nn.Module) or
                                  callable(model)):
        raise TypeError("model must be the torch.nn.Module whose weights "
                        "the bundle binds (or None), not %s %r"
                        % (_type_name(model), model))
    if not os.path.isdir(bundle):
        raise FileNotFoundError("bundle: %s is not a directory (a bundle "
                                "ein-compile wrote)" % bundle)
    path = frontend or os.path.join(bundle, "frontend.json")
    description = _export.read_description(path)
    if frontend:
        bundle_constants = os.path.dirname(os.path.abspath(frontend))
    else:
        bundle_constants = bundle
    weights = _weights_for(description, model, bundle_constants)
    missing = [a["name"] for i, a in enumerate(description["arguments"])
               if a["kind"] == "weight" and i not in weights]
    if missing:
        raise FrontendError("the bundle needs the weights %s: pass the model"
                            % ", ".join(missing[:5]))
    return Compiled(bundle, description, weights, device_map=device_map)


from ._training import (Trainer, compile_training,  # noqa: E402
                        load_training)
