"""The front end from the command line, for people who do not want Python in
the loop:

  python3 -m einsummable export FILE.py:FACTORY --inputs 2x20x96:f32,... \\
      -o model.mlir [--weights-dir DIR] [--seed S]

calls FACTORY() (a class or function in FILE returning a torch.nn.Module or
a function of tensors), traces it on inputs of the given shapes and dtypes,
and writes the linalg program, `model.frontend.json` beside it (what each
argument is: `einsummable.load(bundle, model, frontend=...)` binds a bundle
compiled from the program to the model's weights), and with --weights-dir
one `.npy` per weight argument, `DIR/arg<i>.npy` for argument i, which
`ein-run BUNDLE --weights-dir=DIR` binds.
"""

import argparse
import importlib.util
import os
import sys

import torch

from . import _export
from ._errors import FrontendError

_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
           "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
           "i1": torch.bool}


def parse_inputs(text):
    """'2x20x96:f32,4:i64' -> example tensors (normal floats, zero
    integers)."""
    tensors = []
    for item in text.split(","):
        shape_text, _, dtype_text = item.strip().partition(":")
        dtype = _DTYPES.get(dtype_text or "f32")
        if dtype is None:
            raise SystemExit("--inputs: unknown element type '%s' in '%s' "
                             "(f32, f64, f16, bf16, i64, i32, i1)"
                             % (dtype_text, item))
        try:
            shape = [int(d) for d in shape_text.split("x")] \
                if shape_text else []
        except ValueError:
            raise SystemExit("--inputs: '%s' is not a shape like 2x20x96"
                             % shape_text)
        if dtype.is_floating_point:
            tensors.append(torch.randn(*shape).to(dtype))
        else:
            tensors.append(torch.zeros(*shape, dtype=dtype))
    return tuple(tensors)


def load_factory(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit("expected FILE.py:FACTORY, got '%s'" % spec)
    if not os.path.exists(path):
        raise SystemExit("no such file: %s" % path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec = importlib.util.spec_from_file_location(
        "einsummable_user_model", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit("%s has no '%s'" % (path, name))
    return getattr(module, name)


def save_npy(tensor, path):
    import numpy
    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        array = t.view(torch.int16).numpy().view(numpy.uint16)
    else:
        array = t.numpy()
    tmp = path + ".tmp.npy"
    numpy.save(tmp, array)
    os.replace(tmp, path)


def export_command(args):
    torch.manual_seed(args.seed)
    factory = load_factory(args.model)
    model = factory()
    if isinstance(model, torch.nn.Module):
        model = model.eval()
    inputs = parse_inputs(args.inputs)
    exported = _export.export(model, inputs)
    stem = os.path.splitext(args.output)[0]
    exported.write(args.output, stem + ".frontend.json")
    if args.weights_dir:
        os.makedirs(args.weights_dir, exist_ok=True)
        for i, a in enumerate(exported.arguments):
            if a["kind"] == "weight":
                save_npy(a["tensor"], os.path.join(args.weights_dir,
                                                   "arg%d.npy" % i))
    print("wrote %s (%d inputs, %d weights)" % (
        args.output,
        sum(1 for a in exported.arguments if a["kind"] == "input"),
        sum(1 for a in exported.arguments if a["kind"] == "weight")))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m einsummable")
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="write a model's linalg program")
    export.add_argument("model", help="FILE.py:FACTORY")
    export.add_argument("--inputs", required=True,
                        help="example input shapes: 2x20x96:f32,...")
    export.add_argument("-o", "--output", required=True,
                        help="the linalg program to write (.mlir)")
    export.add_argument("--weights-dir",
                        help="also write the weights, DIR/arg<i>.npy")
    export.add_argument("--seed", type=int, default=0,
                        help="torch.manual_seed before FACTORY() (default 0)")
    args = parser.parse_args(argv)
    try:
        export_command(args)
    except FrontendError as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
