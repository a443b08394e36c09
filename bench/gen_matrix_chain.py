#!/usr/bin/env python3
"""Writes the matrix-chain workloads of WORKLOADS.md (A to E) as ein programs.

  python3 bench/gen_matrix_chain.py NAME [--scale S] [--dtype bf16]

bf16 operands with f32 accumulation, as the JAX peer (bench/peers/
jax_matrix_chain.py) computes them. Operands are marked {ein.weight}: the
workloads lay inputs out ahead of time, in any layout, untimed. --scale
divides every dimension (for a small copy to check against the evaluator).
"""
import argparse

CHAINS = {
    "A-square-chain": ([(8192, 8192)] * 4, "left"),
    "B-skinny-chain": ([(32768, 2048), (2048, 8192), (8192, 2048), (2048, 8192)], "left"),
    "C-bushy": ([(8192, 8192)] * 4, "bushy"),
    "D-batched": ([(64, 2048, 2048)] * 3, "left"),
    "E-big-matmul": ([(16384, 16384)] * 2, "left"),
}


def tensor(shape, dtype):
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), dtype)


def matmul(out, a, b, sa, sb, dtype, lines):
    batched = len(sa) == 3
    so = (sa[0], sa[1], sb[2]) if batched else (sa[0], sb[1])
    ia, ib, io = (("d0, d1, d3", "d0, d3, d2", "d0, d1, d2") if batched
                  else ("d0, d1", "d1, d2", "d0, d2"))
    lines.append(
        "  %%%s = ein.join_agg add ins(%%%s[%s], %%%s[%s] : %s, %s) out[%s] : %s {"
        % (out, a, ia, b, ib, tensor(sa, dtype), tensor(sb, dtype), io,
           tensor(so, dtype)))
    lines.append("  ^bb0(%%x: %s, %%y: %s):" % (dtype, dtype))
    if dtype == "f32":
        lines.append("    %m = arith.mulf %x, %y : f32")
    else:
        lines.append("    %%xf = arith.extf %%x : %s to f32" % dtype)
        lines.append("    %%yf = arith.extf %%y : %s to f32" % dtype)
        lines.append("    %m = arith.mulf %xf, %yf : f32")
    lines.append("    ein.yield %m : f32")
    lines.append("  }")
    return so


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=sorted(CHAINS))
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    args = parser.parse_args()
    shapes, form = CHAINS[args.name]
    shapes = [tuple(d // args.scale if i >= len(s) - 2 else d
                    for i, d in enumerate(s)) for s in shapes]
    names = "abcd"[:len(shapes)]
    lines = []
    if form == "bushy":
        s1 = matmul("ab", "a", "b", shapes[0], shapes[1], args.dtype, lines)
        s2 = matmul("cd", "c", "d", shapes[2], shapes[3], args.dtype, lines)
        last, shape = "r", matmul("r", "ab", "cd", s1, s2, args.dtype, lines)
    else:
        last, shape = names[0], shapes[0]
        for i in range(1, len(shapes)):
            out = "p%d" % i
            shape = matmul(out, last, names[i], shape, shapes[i], args.dtype,
                           lines)
            last = out
    params = ", ".join("%%%s: %s {ein.weight}" % (n, tensor(s, args.dtype))
                       for n, s in zip(names, shapes))
    name = args.name.replace("-", "_")
    print("// %s (WORKLOADS.md), %s, scale 1/%d. Written by "
          "bench/gen_matrix_chain.py." % (args.name, args.dtype, args.scale))
    print("func.func @%s(%s) -> %s {" % (name, params,
                                          tensor(shape, args.dtype)))
    print("\n".join(lines))
    print("  return %%%s : %s" % (last, tensor(shape, args.dtype)))
    print("}")


if __name__ == "__main__":
    main()
