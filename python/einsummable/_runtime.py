"""The runtime's C API (runtime/include/ein/runtime.h) through ctypes.

A `Bundle` owns one loaded bundle: its inputs and outputs described, inputs
set from NumPy arrays or raw bytes, runs, outputs read back, benchmarks.
Every failed call raises `RuntimeError` with the runtime's own sentence;
so does any call after close() (the C API would be handed a NULL bundle).
Each call into the C API holds the bundle's lock, so close() never frees a
bundle another thread is running; a sequence of calls (set the inputs, run,
read the outputs) is made whole by its caller (`Compiled` holds its own
lock around it).
"""

import ctypes
import os
import threading

from . import _tools

EIN_OK = 0


class _TensorInfo(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_char_p), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("bytes", ctypes.c_size_t)]


class _LoadOptions(ctypes.Structure):
    # runtime.h's ein_load_options, whose size ein_bundle_load_with is told.
    _fields_ = [("debug", ctypes.c_int), ("device_map_size", ctypes.c_int),
                ("device_map", ctypes.POINTER(ctypes.c_int))]


_library = None


def library():
    """The loaded libeinsummable_runtime.so (loaded once)."""
    global _library
    if _library is not None:
        return _library
    path = _tools.runtime_library()
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p
    lib.ein_last_error.restype = ctypes.c_char_p
    lib.ein_bundle_load.argtypes = [ctypes.c_char_p,
                                    ctypes.POINTER(_LoadOptions),
                                    ctypes.POINTER(p)]
    lib.ein_bundle_load_with.argtypes = [ctypes.c_char_p,
                                         ctypes.POINTER(_LoadOptions),
                                         ctypes.c_size_t, ctypes.POINTER(p)]
    lib.ein_bundle_free.argtypes = [p]
    lib.ein_bundle_free.restype = None
    lib.ein_bundle_target.argtypes = [p]
    lib.ein_bundle_target.restype = ctypes.c_char_p
    for name in ("ein_bundle_devices", "ein_bundle_gpus", "ein_bundle_nodes",
                 "ein_bundle_rank", "ein_bundle_ranks"):
        getattr(lib, name).argtypes = [p]
    for name in ("ein_bundle_flops", "ein_bundle_peak_flops"):
        getattr(lib, name).argtypes = [p]
        getattr(lib, name).restype = ctypes.c_double
    lib.ein_bundle_describe.argtypes = [p]
    lib.ein_bundle_describe.restype = ctypes.c_char_p
    for name in ("ein_bundle_num_inputs", "ein_bundle_num_outputs",
                 "ein_bundle_num_steps"):
        getattr(lib, name).argtypes = [p]
    for name in ("ein_bundle_input_info", "ein_bundle_output_info"):
        getattr(lib, name).argtypes = [p, ctypes.c_int,
                                       ctypes.POINTER(_TensorInfo)]
    lib.ein_bundle_set_input.argtypes = [p, ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_size_t]
    lib.ein_bundle_run.argtypes = [p]
    lib.ein_bundle_get_output.argtypes = [p, ctypes.c_int, ctypes.c_void_p,
                                          ctypes.c_size_t]
    lib.ein_bundle_output_updates.argtypes = [p, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_int)]
    lib.ein_bundle_carry.argtypes = [p]
    lib.ein_bundle_bench_with.argtypes = [p, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_double)]
    _library = lib
    return lib


class TensorInfo:
    """An input or output of a bundle: dtype name ("f32", "bf16", ...),
    shape and size in bytes; an output's `updates` names the input it is
    the next value of (Bundle.carry), or is None."""

    def __init__(self, info):
        self.updates = None
        self.dtype = info.dtype.decode()
        self.shape = tuple(info.shape[i] for i in range(info.rank))
        self.bytes = info.bytes

    def __repr__(self):
        return "%s%s" % (self.dtype, list(self.shape))


class Bundle:
    """One loaded bundle (docs/bundle-format.md)."""

    def __init__(self, directory, debug=False, device_map=None):
        """`device_map`: None, or the GPU of each device (a list of ints
        the caller has checked; docs/cuda-runtime.md, "Logical devices").
        A refusal of the map raises ValueError naming `device_map`."""
        self._lib = library()
        self._lock = threading.RLock()
        self._handle = ctypes.c_void_p()
        self.directory = directory
        options = _LoadOptions(1 if debug else 0, 0, None)
        if device_map is not None:
            entries = (ctypes.c_int * len(device_map))(*device_map)
            options.device_map_size = len(device_map)
            options.device_map = entries
        status = self._lib.ein_bundle_load_with(
            os.fsencode(directory), ctypes.byref(options),
            ctypes.sizeof(options), ctypes.byref(self._handle))
        if status != EIN_OK:
            message = self._lib.ein_last_error().decode()
            if device_map is not None and message.startswith(
                    "the device map"):
                raise ValueError("device_map=%s: %s"
                                 % (list(device_map), message))
            raise RuntimeError(message)
        self.target = self._lib.ein_bundle_target(self._handle).decode()
        self.devices = self._lib.ein_bundle_devices(self._handle)
        # The distinct GPUs the devices run on (fewer than the devices where
        # a device map folds them; 0 on the cpu target).
        self.gpus = self._lib.ein_bundle_gpus(self._handle)
        # Under mpirun, a bundle for several nodes runs one rank per process
        # (docs/distributed.md): every call is then collective, rank 0's
        # inputs are scattered and the outputs gathered into rank 0.
        self.nodes = self._lib.ein_bundle_nodes(self._handle)
        self.rank = self._lib.ein_bundle_rank(self._handle)
        self.ranks = self._lib.ein_bundle_ranks(self._handle)
        self.flops = self._lib.ein_bundle_flops(self._handle)
        self.peak_flops = self._lib.ein_bundle_peak_flops(self._handle)
        self.inputs = [self._info(self._lib.ein_bundle_input_info, i)
                       for i in range(self._lib.ein_bundle_num_inputs(
                           self._handle))]
        self.outputs = [self._info(self._lib.ein_bundle_output_info, i)
                        for i in range(self._lib.ein_bundle_num_outputs(
                            self._handle))]
        # The input each output is the next value of (a training step's
        # weights and state), or None.
        for i, info in enumerate(self.outputs):
            k = ctypes.c_int()
            self._check(self._lib.ein_bundle_output_updates(
                self._handle, i, ctypes.byref(k)))
            info.updates = k.value if k.value >= 0 else None

    def _check(self, status):
        if status != EIN_OK:
            raise RuntimeError(self._lib.ein_last_error().decode())

    @property
    def closed(self):
        return not self._handle

    def _live(self):
        """The handle; a closed bundle raises instead of handing the C API
        NULL. Call it holding self._lock."""
        if not self._handle:
            raise RuntimeError("the bundle %s is closed" % self.directory)
        return self._handle

    def _info(self, fn, index):
        info = _TensorInfo()
        self._check(fn(self._handle, index, ctypes.byref(info)))
        return TensorInfo(info)

    def describe(self):
        with self._lock:
            return self._lib.ein_bundle_describe(self._live()).decode()

    def set_input(self, index, address, nbytes):
        """Copies input `index` from `nbytes` bytes at host `address`."""
        with self._lock:
            self._check(self._lib.ein_bundle_set_input(
                self._live(), index, ctypes.c_void_p(address), nbytes))

    def run(self):
        with self._lock:
            self._check(self._lib.ein_bundle_run(self._live()))

    def get_output(self, index, address, nbytes):
        """Copies output `index` of the last run to host `address`."""
        with self._lock:
            self._check(self._lib.ein_bundle_get_output(
                self._live(), index, ctypes.c_void_p(address), nbytes))

    def carry(self):
        """Copies each output of the last run that updates an input
        (`outputs[i].updates`) into that input, on the devices."""
        with self._lock:
            self._check(self._lib.ein_bundle_carry(self._live()))

    def bench(self, warmup=10, iterations=100, host_timer=False):
        """Median milliseconds of one step, by the runtime's timer."""
        median = ctypes.c_double()
        with self._lock:
            self._check(self._lib.ein_bundle_bench_with(
                self._live(), 1 if host_timer else 0, warmup, iterations,
                ctypes.byref(median)))
        return median.value

    def close(self):
        """Frees the bundle; a second close() does nothing."""
        with self._lock:
            if self._handle:
                self._lib.ein_bundle_free(self._handle)
                self._handle = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
