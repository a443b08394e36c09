"""A model as a linalg program file and the description beside it.

`export` traces a model and writes (1) the linalg program, one function
`@forward` whose arguments are the model's inputs, then its weights
(parameters and buffers, marked `{ein.weight}`), then any tensor constant
of the trace (also weights), and (2) `frontend.json`: what each argument
is (its name in the model) and how the results nest, so a bundle compiled
from the program can be bound to the model's weights anywhere, by name.
"""

import json
import os

import torch

from . import _aten, _linalg, _trace
from ._errors import FrontendError

FRONTEND_FORMAT = "einsummable-frontend"
FRONTEND_VERSION = 1


class Exported:
    def __init__(self, text, arguments, output_kind, num_outputs,
                 output_names=None):
        self.text = text
        self.arguments = arguments  # dicts: kind, name, tensor, value
        self.output_kind = output_kind
        self.num_outputs = num_outputs
        self.output_names = output_names  # a mapping result's keys

    def description(self, constants_dir="constants"):
        """frontend.json's content."""
        args = []
        for a in self.arguments:
            entry = {"kind": a["kind"], "name": a["name"],
                     "dtype": _linalg.element_type(a["tensor"].dtype),
                     "shape": list(a["tensor"].shape)}
            if a.get("constant"):
                entry["file"] = "%s/%s.bin" % (constants_dir, a["name"])
            args.append(entry)
        outputs = {"kind": self.output_kind, "count": self.num_outputs}
        if self.output_names is not None:
            outputs["names"] = list(self.output_names)
        return {"format": FRONTEND_FORMAT, "version": FRONTEND_VERSION,
                "arguments": args, "outputs": outputs}

    def write(self, mlir_path, description_path):
        """Writes the program and frontend.json (with the constants' bytes
        in a `constants` directory beside it)."""
        directory = os.path.dirname(os.path.abspath(description_path))
        for a in self.arguments:
            if a.get("constant"):
                os.makedirs(os.path.join(directory, "constants"),
                            exist_ok=True)
                write_raw(a["tensor"], os.path.join(
                    directory, "constants", a["name"] + ".bin"))
        _write_text(mlir_path, self.text)
        _write_text(description_path,
                    json.dumps(self.description(), indent=2) + "\n")


def _write_atomic(path, data, mode="w"):
    """Writes `path` whole or not at all: through `path`.tmp, which a
    failed write (a full disk) removes."""
    tmp = path + ".tmp"
    try:
        with open(tmp, mode) as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def _write_text(path, text):
    _write_atomic(path, text)


def raw_bytes(tensor):
    """A tensor's bytes, row-major (bf16/f16 as 2-byte payloads)."""
    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def write_raw(tensor, path):
    _write_atomic(path, raw_bytes(tensor), "wb")


def read_raw(path, shape, dtype):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    storage = torch.int16 if dtype == torch.bfloat16 else dtype
    t = torch.frombuffer(data, dtype=storage).reshape(shape)
    return t.view(torch.bfloat16) if dtype == torch.bfloat16 else t.clone()


def export(model, example_inputs, marked=None):
    """The model traced and translated. `marked(argument)` says which
    weights carry {ein.weight} in the program (every one by default;
    compile_training marks only the parameters it trains)."""
    # One trace at a time in this process: PyTorch's tracer (make_fx,
    # functionalize) keeps state of its own that two threads tracing at once
    # corrupt (an internal assert).
    with _trace.LOCK:
        traced = _trace.trace(model, example_inputs)
        translator = _aten.Translator(traced.graph, traced.arguments,
                                      _trace.locate)
        results = translator.run()
    for a in translator.arguments:
        if a["name"] in translator.constants:
            a["constant"] = True
    lines = translator.e.lines
    args = []
    for a in translator.arguments:
        weight = a["kind"] == "weight" and (marked is None or marked(a))
        attrs = " {ein.weight}" if weight else ""
        args.append("%s: %s%s" % (a["value"].name, a["value"].type, attrs))
    header = "func.func @forward(%s) -> (%s) {" % (
        ", ".join(args), ", ".join(r.type for r in results))
    body = ["    " + line.replace("\n", "\n    ") for line in lines]
    ret = "    return %s : %s" % (", ".join(r.name for r in results),
                                  ", ".join(r.type for r in results))
    name = type(model).__name__ if isinstance(model, torch.nn.Module) \
        else getattr(model, "__name__", "function")
    text = "\n".join(
        ["// The linalg program of %s, written by the einsummable front "
         "end (python/einsummable)." % name,
         "// Arguments: the inputs, then the weights {ein.weight} "
         "(frontend.json names them).",
         "module {", "  " + header] + body + [ret, "  }", "}", ""])
    return Exported(text, translator.arguments, traced.output_kind,
                    traced.num_outputs, traced.output_names)


def read_description(path):
    try:
        with open(path) as f:
            description = json.load(f)
    except FileNotFoundError:
        raise FrontendError(
            "%s is missing: bind a bundle to a model with the frontend.json "
            "the export wrote beside its program" % path)
    except ValueError as error:
        raise FrontendError("%s is not valid JSON: %s" % (path, error))
    if description.get("format") != FRONTEND_FORMAT:
        raise FrontendError("%s is not an einsummable front-end description"
                            % path)
    if description.get("version") != FRONTEND_VERSION:
        raise FrontendError("%s has version %r; this front end reads %d"
                            % (path, description.get("version"),
                               FRONTEND_VERSION))
    outputs = description.get("outputs", {})
    if outputs.get("kind") == "dict":
        names = outputs.get("names")
        if not isinstance(names, list) or len(names) != outputs.get("count"):
            raise FrontendError(
                "%s describes a mapping result without a name for each of "
                "its %r outputs" % (path, outputs.get("count")))
    return description
