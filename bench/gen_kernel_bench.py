#!/usr/bin/env python3
"""Writes the single-kernel programs of the kernel-speed benchmark (the CUDA
code generation issue): bf16 elementwise maps, RMSNorm, LayerNorm (at
LLaMA and at GPT-2 width, 8 x 1024 tokens) and a gemm at LLaMA shapes, and gemms with a ragged dimension, one ein program each, for
ein-compile --target=cuda --devices=1.

  python3 bench/gen_kernel_bench.py OUT_DIR

Each file's first line says what the peer (bench/torch_kernels.py) times and
how many bytes or flops the kernel must move or do (the ideal, each operand
read once and the result written once).
"""
import os
import sys

T = 16384  # tokens: 8 x 2048, as w2


def tensor(shape, dtype="bf16"):
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def program(name, args, ops, result):
    sig = ", ".join(f"%{n}: {t}" for n, t in args)
    return (f"func.func @{name}({sig}) -> {result[1]} {{\n" + ops +
            f"  return %{result[0]} : {result[1]}\n}}\n")


def add(hidden=4096):
    t = tensor([T, hidden])
    body = f"""  %z = ein.join_agg none ins(%x[d0, d1], %y[d0, d1] : {t}, {t}) out[d0, d1] : {t} {{
  ^bb0(%a: bf16, %b: bf16):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %af, %bf : f32
    ein.yield %s : f32
  }}
"""
    return (f"// bytes={3 * 2 * T * hidden} peer=add\n" +
            program("add", [("x", t), ("y", t)], body, ("z", t)))


def scale(hidden=4096):
    # One read and one write an element, as a norm: the copy-like ceiling
    # the norms are held to.
    t = tensor([T, hidden])
    body = f"""  %z = ein.join_agg none ins(%x[d0, d1] : {t}) out[d0, d1] : {t} {{
  ^bb0(%a: bf16):
    %af = arith.extf %a : bf16 to f32
    %two = arith.constant 2.0 : f32
    %s = arith.mulf %af, %two : f32
    ein.yield %s : f32
  }}
"""
    return (f"// bytes={2 * 2 * T * hidden} peer=scale\n" +
            program("scale", [("x", t)], body, ("z", t)))


def silu_mul(ffn=14336):
    t = tensor([T, ffn])
    body = f"""  %z = ein.join_agg none ins(%g[d0, d1], %u[d0, d1] : {t}, {t}) out[d0, d1] : {t} {{
  ^bb0(%a: bf16, %b: bf16):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %af : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %af, %d : f32
    %m = arith.mulf %s, %bf : f32
    ein.yield %m : f32
  }}
"""
    return (f"// bytes={3 * 2 * T * ffn} peer=silu_mul\n" +
            program("silu_mul", [("g", t), ("u", t)], body, ("z", t)))


def rms_norm(hidden=4096):
    t = tensor([T, hidden])
    w = tensor([hidden])
    body = f"  %z = ein.rms_norm %x, %w eps 1.0e-05 : {t}, {w}\n"
    return (f"// bytes={2 * 2 * T * hidden} peer=rms_norm\n" +
            program("rms_norm", [("x", t), ("w", w)], body, ("z", t)))


def layer_norm(name="layer_norm", tokens=T, hidden=4096):
    t = tensor([tokens, hidden])
    w = tensor([hidden])
    body = f"  %z = ein.layer_norm %x weight %w bias %b eps 1.0e-05 : {t}, {w}, {w}\n"
    return (f"// bytes={2 * 2 * tokens * hidden} peer={name}\n" +
            program(name, [("x", t), ("w", w), ("b", w)], body, ("z", t)))


def gemm(name="gemm", m=T, k=4096, n=4096):
    a, b, c = tensor([m, k]), tensor([k, n]), tensor([m, n])
    body = f"""  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : {a}, {b}) out[d0, d2] : {c} {{
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    ein.yield %m : f32
  }}
"""
    return (f"// flops={2 * m * k * n} peer={name}\n" +
            program(name, [("a", a), ("b", b)], body, ("c", c)))


# Gemms with a dimension that is not a multiple of 8 (the CUDA runtime runs
# them on zero-padded copies, runtime/lib/cuda/gemm_pad.h), with the same
# shapes in bench/torch_kernels.py.
RAGGED_GEMMS = {
    "gemm_8191": (8191, 8191, 8191),
    "gemm_m16383": (T - 1, 4096, 4096),
    "gemm_k4097": (T, 4097, 4096),
    "gemm_n4095": (T, 4096, 4095),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, text in [("add", add()), ("scale", scale()),
                       ("silu_mul", silu_mul()),
                       ("rms_norm", rms_norm()),
                       ("layer_norm", layer_norm()),
                       ("layer_norm_768",
                        layer_norm("layer_norm_768", 8192, 768)),
                       ("gemm", gemm())] + [
                           (name, gemm(name, *shape))
                           for name, shape in RAGGED_GEMMS.items()]:
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
