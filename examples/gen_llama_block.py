#!/usr/bin/env python3
"""Writes one LLaMA transformer block (prefill, forward) in the ein dialect.

RMSNorm, Q/K/V projections, RoPE on Q and K, causal attention with grouped KV
heads, output projection, residual, RMSNorm, SwiGLU MLP, residual, as in
bench/WORKLOADS.md and the PyTorch peer. Weights (and the RoPE tables,
which depend only on positions) are function arguments marked {ein.weight};
the activation x is [batch, seq, hidden].

RoPE comes in two forms (--rope):
- rotation (default): each head's dimension is split (2, d/2) and rotated by a
  2 x 2 matrix per position, out[i] = sum_k rope[i, k, s, j] x[k, j], with the
  table rope = [[cos, -sin], [sin, cos]] of shape [2, 2, seq, d/2]: one
  join-agg a spec can cut along every loop;
- halves: the rotate-half of the PyTorch peer, two slices, two joins with the
  cos and sin tables ([seq, d/2] each) and a concat.

  gen_llama_block.py --workload w1-l3-8b-b1-s8k > w1.mlir
  gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16
"""
import argparse
import sys

# name: (hidden, heads, kv_heads, ffn, batch, seq), as in WORKLOADS.md.
WORKLOADS = {
    "w1-l3-8b-b1-s8k": (4096, 32, 8, 14336, 1, 8192),
    "w2-l3-8b-b8-s2k": (4096, 32, 8, 14336, 8, 2048),
    "w3-l2-7b-b4-s4k": (4096, 32, 32, 11008, 4, 4096),
    "w4-l3-70b-b1-s4k": (8192, 64, 8, 28672, 1, 4096),
    "w5-l3-8b-b32-s512": (4096, 32, 8, 14336, 32, 512),
    "long-l3-8b-s128k": (4096, 32, 8, 14336, 1, 131072),
}


class Writer:
    def __init__(self, dtype):
        self.dtype = dtype
        self.lines = []
        self.count = 0

    def t(self, *shape):
        return "tensor<" + "x".join(str(s) for s in shape) + "x" + self.dtype + ">"

    def fresh(self, name):
        self.count += 1
        return f"%{name}{self.count}"

    def emit(self, line):
        self.lines.append("  " + line)

    def join_agg(self, name, agg, inputs, out_idx, out_shape, body):
        """inputs: [(value, type, [indices])]; body(args) -> (lines, result)
        computing in f32 from f32 scalars."""
        res = self.fresh(name)
        ins = ", ".join(f"{v}[{', '.join('d%d' % i for i in idx)}]" for v, _, idx in inputs)
        types = ", ".join(t for _, t, _ in inputs)
        out_t = self.t(*out_shape)
        outs = ", ".join("d%d" % i for i in out_idx)
        self.emit(f"{res} = ein.join_agg {agg} ins({ins} : {types}) out[{outs}] : {out_t} {{")
        args = [f"%a{i}" for i in range(len(inputs))]
        self.emit("^bb0(" + ", ".join(f"{a}: {self.dtype}" for a in args) + "):")
        scalars = []
        for a in args:
            if self.dtype == "f32":
                scalars.append(a)
            else:
                self.emit(f"  {a}f = arith.extf {a} : {self.dtype} to f32")
                scalars.append(a + "f")
        lines, value = body(scalars)
        for line in lines:
            self.emit("  " + line)
        self.emit(f"  ein.yield {value} : f32")
        self.emit("}")
        return res, out_t

    def matmul(self, name, x, x_shape, w, w_shape):
        """x [..., k] times w [k, n]."""
        r = len(x_shape)
        x_idx = list(range(r))
        w_idx = [r - 1, r]
        out_idx = list(range(r - 1)) + [r]
        out_shape = list(x_shape[:-1]) + [w_shape[1]]
        mul = lambda s: ([f"%m = arith.mulf {s[0]}, {s[1]} : f32"], "%m")
        res, _ = self.join_agg(name, "add", [(x, self.t(*x_shape), x_idx), (w, self.t(*w_shape), w_idx)],
                               out_idx, out_shape, mul)
        return res, out_shape

    def elementwise(self, name, values, shape, body):
        idx = list(range(len(shape)))
        res, _ = self.join_agg(name, "none", [(v, self.t(*shape), idx) for v in values], idx, shape, body)
        return res

    def add(self, name, a, b, shape):
        return self.elementwise(name, [a, b], shape, lambda s: ([f"%s = arith.addf {s[0]}, {s[1]} : f32"], "%s"))


def block(hidden, heads, kv_heads, ffn, batch, seq, dtype, name, rope_form="rotation", blocks=1):
    if hidden % heads or heads % kv_heads:
        sys.exit("error: hidden must divide by heads and heads by kv heads")
    hd = hidden // heads
    if hd % 2:
        sys.exit("error: RoPE needs an even head dimension")
    half, group = hd // 2, heads // kv_heads
    w = Writer(dtype)
    T = w.t
    B, S, H = batch, seq, hidden
    args = [("%x", T(B, S, H), False)]
    for b in range(blocks):
        s = "" if blocks == 1 else f"_{b}"
        args += [("%norm1" + s, T(H), True), ("%wq" + s, T(H, heads * hd), True),
                 ("%wk" + s, T(H, kv_heads * hd), True), ("%wv" + s, T(H, kv_heads * hd), True),
                 ("%wo" + s, T(heads * hd, H), True), ("%norm2" + s, T(H), True),
                 ("%wg" + s, T(H, ffn), True), ("%wu" + s, T(H, ffn), True),
                 ("%wd" + s, T(ffn, H), True)]
    if rope_form == "rotation":
        args.append(("%rope", T(2, 2, S, half), True))
    else:
        args += [("%cos", T(S, half), True), ("%sin", T(S, half), True)]

    def layer(x_in, s):
        h = w.fresh("h")
        norm1, norm2 = "%norm1" + s, "%norm2" + s
        w.emit(f"{h} = ein.rms_norm {x_in}, {norm1} eps 1.0e-05 : {T(B, S, H)}, {T(H)}")

        def heads_first(name, value, nh):
            # [B, S, nh*hd] -> [B, S, nh, hd] -> [B, nh, S, hd]
            r = w.fresh(name + "_split")
            w.emit(f"{r} = ein.reshape {value} [[0], [1], [2, 3]] : {T(B, S, nh * hd)} -> {T(B, S, nh, hd)}")
            res, _ = w.join_agg(name + "_t", "none", [(r, T(B, S, nh, hd), [0, 1, 2, 3])], [0, 2, 1, 3],
                                [B, nh, S, hd], lambda s: ([], s[0]))
            return res

        def rope_rotation(name, value, nh):
            # value: [B, nh, S, hd] -> [B, nh, S, 2, hd/2], rotated per position.
            shape, split = [B, nh, S, hd], [B, nh, S, 2, half]
            x5 = w.fresh(name + "_pairs")
            w.emit(f"{x5} = ein.reshape {value} [[0], [1], [2], [3, 4]] : {T(*shape)} -> {T(*split)}")
            mul = lambda s: ([f"%m = arith.mulf {s[0]}, {s[1]} : f32"], "%m")
            rotated, _ = w.join_agg(name + "_rot", "add",
                                    [("%rope", T(2, 2, S, half), [3, 5, 2, 4]),
                                     (x5, T(*split), [0, 1, 2, 5, 4])],
                                    [0, 1, 2, 3, 4], split, mul)
            res = w.fresh(name + "_rope")
            w.emit(f"{res} = ein.reshape {rotated} [[0], [1], [2], [3, 4]] : {T(*split)} -> {T(*shape)}")
            return res

        def rope_halves(name, value, nh):
            # value: [B, nh, S, hd]; rotate halves with the position's cos and sin.
            shape, hshape = [B, nh, S, hd], [B, nh, S, half]
            lo, hi = w.fresh(name + "_lo"), w.fresh(name + "_hi")
            w.emit(f"{lo} = ein.slice {value} [0, 0, 0, 0] [{B}, {nh}, {S}, {half}] : {T(*shape)} -> {T(*hshape)}")
            w.emit(f"{hi} = ein.slice {value} [0, 0, 0, {half}] [{B}, {nh}, {S}, {half}] : {T(*shape)} -> {T(*hshape)}")
            ins = [(lo, T(*hshape), [0, 1, 2, 3]), (hi, T(*hshape), [0, 1, 2, 3]),
                   ("%cos", T(S, half), [2, 3]), ("%sin", T(S, half), [2, 3])]
            first, _ = w.join_agg(name + "_r1", "none", ins, [0, 1, 2, 3], hshape, lambda s: (
                [f"%p = arith.mulf {s[0]}, {s[2]} : f32", f"%q = arith.mulf {s[1]}, {s[3]} : f32",
                 "%r = arith.subf %p, %q : f32"], "%r"))
            second, _ = w.join_agg(name + "_r2", "none", ins, [0, 1, 2, 3], hshape, lambda s: (
                [f"%p = arith.mulf {s[1]}, {s[2]} : f32", f"%q = arith.mulf {s[0]}, {s[3]} : f32",
                 "%r = arith.addf %p, %q : f32"], "%r"))
            res = w.fresh(name + "_rope")
            w.emit(f"{res} = ein.concat dim 3 {first}, {second} : {T(*hshape)}, {T(*hshape)} -> {T(*shape)}")
            return res

        q, _ = w.matmul("q", h, [B, S, H], "%wq" + s, [H, heads * hd])
        k, _ = w.matmul("k", h, [B, S, H], "%wk" + s, [H, kv_heads * hd])
        v, _ = w.matmul("v", h, [B, S, H], "%wv" + s, [H, kv_heads * hd])
        rope = rope_rotation if rope_form == "rotation" else rope_halves
        q = rope("q", heads_first("q", q, heads), heads)
        k = rope("k", heads_first("k", k, kv_heads), kv_heads)
        v = heads_first("v", v, kv_heads)
        att = w.fresh("att")
        w.emit(f"{att} = ein.attention {q}, {k}, {v} {{causal, group = {group} : i64}} : "
               f"{T(B, heads, S, hd)}, {T(B, kv_heads, S, hd)}, {T(B, kv_heads, S, hd)} -> {T(B, heads, S, hd)}")
        back, _ = w.join_agg("att_t", "none", [(att, T(B, heads, S, hd), [0, 1, 2, 3])], [0, 2, 1, 3],
                             [B, S, heads, hd], lambda s: ([], s[0]))
        merged = w.fresh("att_merged")
        w.emit(f"{merged} = ein.reshape {back} [[0], [1], [2, 3]] : {T(B, S, heads, hd)} -> {T(B, S, H)}")
        o, _ = w.matmul("o", merged, [B, S, heads * hd], "%wo" + s, [heads * hd, H])
        x1 = w.add("res1_", x_in, o, [B, S, H])

        h2 = w.fresh("h")
        w.emit(f"{h2} = ein.rms_norm {x1}, {norm2} eps 1.0e-05 : {T(B, S, H)}, {T(H)}")
        g, _ = w.matmul("gate", h2, [B, S, H], "%wg" + s, [H, ffn])
        u, _ = w.matmul("up", h2, [B, S, H], "%wu" + s, [H, ffn])
        swiglu = w.elementwise("swiglu", [g, u], [B, S, ffn], lambda s: (
            ["%one = arith.constant 1.0 : f32", f"%n = arith.negf {s[0]} : f32", "%e = math.exp %n : f32",
             "%den = arith.addf %one, %e : f32", f"%silu = arith.divf {s[0]}, %den : f32",
             f"%r = arith.mulf %silu, {s[1]} : f32"], "%r"))
        down, _ = w.matmul("down", swiglu, [B, S, ffn], "%wd" + s, [ffn, H])
        return w.add("res2_", x1, down, [B, S, H])

    out = "%x"
    for b in range(blocks):
        out = layer(out, "" if blocks == 1 else f"_{b}")

    sig = ",\n    ".join(f"{n}: {t}" + (" {ein.weight}" if wt else "") for n, t, wt in args)
    header = [f"// One LLaMA block: hidden {hidden}, {heads} heads, {kv_heads} KV heads, ffn {ffn},",
              f"// batch {batch}, seq {seq}, {dtype}, RoPE as {rope_form}. Written by",
              f"// examples/gen_llama_block.py.",
              f"func.func @{name}(\n    {sig}) -> {T(B, S, H)} {{"]
    return "\n".join(header + w.lines + [f"  return {out} : {T(B, S, H)}", "}"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), help="a row of WORKLOADS.md")
    for flag in ("hidden", "heads", "kv-heads", "ffn", "batch", "seq"):
        ap.add_argument("--" + flag, type=int)
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default=None,
                    help="element type (default bf16 for workloads, f32 otherwise)")
    ap.add_argument("--name", default="llama_block")
    ap.add_argument("--blocks", type=int, default=1,
                    help="stack this many blocks, each with its own weights (the RoPE tables shared)")
    ap.add_argument("--rope", choices=["rotation", "halves"], default="rotation",
                    help="RoPE as one 2x2 rotation join (default) or as rotate-half slices")
    a = ap.parse_args()
    if a.workload:
        dims = WORKLOADS[a.workload]
        dtype = a.dtype or "bf16"
    else:
        dims = (a.hidden, a.heads, a.kv_heads, a.ffn, a.batch, a.seq)
        if None in dims:
            ap.error("give --workload or all of --hidden --heads --kv-heads --ffn --batch --seq")
        if min(dims) < 1:
            ap.error("sizes must be positive")
        dtype = a.dtype or "f32"
    if a.blocks < 1:
        ap.error("--blocks must be positive")
    sys.stdout.write(block(*dims, dtype, a.name, a.rope, a.blocks))


if __name__ == "__main__":
    main()
