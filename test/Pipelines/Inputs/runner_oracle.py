"""Drivers for import-runner-oracle.test and the comparison it checks.

    runner_oracle.py prepare INPUTS DIR NAME...
        For each INPUTS/linalg_NAME.mlir (one function on f32 tensors) draws
        inputs and writes DIR/NAME.<i>.npy with DIR/NAME.inputs and
        DIR/NAME.outputs (ein-eval's --inputs and --outputs lists), and
        DIR/NAME.driver.mlir: the same function, unchanged, and a @main that
        builds the same inputs as constants, calls it and prints each result
        with printMemrefF32, for upstream MLIR to lower and mlir-runner to run.
    runner_oracle.py check DIR NAME...
        Compares what mlir-runner printed (DIR/NAME.runner.txt) with ein-eval's
        results; exits 1 if any differ.
"""
import os
import re
import sys
import zlib

import numpy as np

SIGNATURE = re.compile(r"func\.func @(\w+)\((.*?)\)\s*->\s*\(?(.*?)\)?\s*\{", re.S)
TENSOR = re.compile(r"tensor<((?:\d+x)*)f32>")
# printMemrefF32 prints 6 significant digits; float32 arithmetic against
# ein-eval's float64 stays far below this.
TOLERANCE = 1e-4


def shapes(types):
    """The shapes of a list of static f32 tensor types (the only kind the drivers build)."""
    found = TENSOR.findall(types)
    assert len(found) == types.count("tensor<"), f"not all static f32 tensors: {types}"
    return [tuple(int(d) for d in dims.split("x") if d) for dims in found]


def signature(text):
    name, args, results = SIGNATURE.search(text).groups()
    return name, shapes(args), shapes(results)


def tensor_type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def memref_type(shape):
    return "memref<" + "".join(f"{d}x" for d in shape) + "f32>"


def literal(array):
    # 9 significant digits name a float32 exactly.
    if array.ndim == 0:
        return "%.9g" % array
    return "[" + ", ".join(literal(row) for row in array) + "]"


def driver(text, name, inputs, results):
    arg_types = ", ".join(tensor_type(a.shape) for a in inputs)
    result_types = ", ".join(tensor_type(s) for s in results)
    lines = [text, "func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}",
             "func.func @main() {"]
    for i, a in enumerate(inputs):
        lines.append(f"  %a{i} = arith.constant dense<{literal(a)}> : {tensor_type(a.shape)}")
    args = ", ".join(f"%a{i}" for i in range(len(inputs)))
    lines.append(f"  %r:{len(results)} = func.call @{name}({args}) : ({arg_types}) -> ({result_types})")
    for i, s in enumerate(results):
        lines.append(f"  %m{i} = bufferization.to_buffer %r#{i} : {tensor_type(s)} to {memref_type(s)}")
        lines.append(f"  %u{i} = memref.cast %m{i} : {memref_type(s)} to memref<*xf32>")
        lines.append(f"  func.call @printMemrefF32(%u{i}) : (memref<*xf32>) -> ()")
    lines += ["  return", "}", ""]
    return "\n".join(lines)


def prepare(inputs_dir, directory, names):
    for name in names:
        with open(os.path.join(inputs_dir, f"linalg_{name}.mlir")) as f:
            text = f.read()
        function, arg_shapes, result_shapes = signature(text)
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inputs = [(rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32) for s in arg_shapes]
        paths = [os.path.join(directory, f"{name}.{i}.npy") for i in range(len(inputs))]
        for path, a in zip(paths, inputs):
            np.save(path, a)
        outputs = [os.path.join(directory, f"{name}.eval{i}.npy") for i in range(len(result_shapes))]
        with open(os.path.join(directory, f"{name}.inputs"), "w") as f:
            f.write(",".join(paths))
        with open(os.path.join(directory, f"{name}.outputs"), "w") as f:
            f.write(",".join(outputs))
        with open(os.path.join(directory, f"{name}.driver.mlir"), "w") as f:
            f.write(driver(text, function, inputs, result_shapes))


def printed_memrefs(text):
    """The (shape, values) of each printMemrefF32 in mlir-runner's output."""
    memrefs = []
    for block in text.split("Unranked Memref")[1:]:
        sizes = re.search(r"sizes = \[([\d, ]*)\]", block).group(1)
        shape = tuple(int(s) for s in sizes.split(",") if s.strip())
        data = block.split("data =", 1)[1]
        values = [float(v) for v in re.findall(r"-?(?:inf|nan|[\d.]+(?:e[-+]?\d+)?)", data)]
        memrefs.append(np.array(values).reshape(shape))
    return memrefs


def check(directory, names):
    ok = True
    for name in names:
        with open(os.path.join(directory, f"{name}.runner.txt")) as f:
            got = printed_memrefs(f.read())
        with open(os.path.join(directory, f"{name}.outputs")) as f:
            want = [np.load(p).astype(np.float64) for p in f.read().split(",")]
        errors = []
        for g, w in zip(got, want):
            if g.shape != w.shape:
                errors.append(np.inf)
                continue
            diff = np.where(g == w, 0.0, np.abs(g - w))  # equal infinities agree
            errors.append(np.nan_to_num(diff.max(), nan=np.inf) / max(1.0, np.abs(w[np.isfinite(w)]).max(initial=0.0)))
        if len(got) != len(want):
            errors.append(np.inf)
        err = max(errors)
        if err < TOLERANCE:
            print(f"{name}: runner matches ein-eval on {len(want)} result(s) (max_rel_err {err:.2g})")
        else:
            ok = False
            shapes = ", ".join(str(g.shape) for g in got)
            print(f"{name}: runner DIFFERS from ein-eval (max_rel_err {err:.3g}, runner printed {shapes})")
    return ok


def main():
    mode = sys.argv[1]
    if mode == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif not check(sys.argv[2], sys.argv[3:]):
        sys.exit(1)


if __name__ == "__main__":
    main()
