"""Writes a random join-agg program (a DAG of contractions, elementwise maps
with broadcasts and transposes, and add/max/min reductions) in the ein
dialect, for the property test: whatever the plan, device count, topology or
exchange form, every compiled bundle must match the reference evaluator.

usage: random_dag.py SEED   (stdlib only; the same seed, the same program)
"""
import random
import sys


class Program:
    def __init__(self, rng):
        self.rng = rng
        self.dtype = rng.choice(["f32", "f32", "bf16"])
        self.lines = []
        self.values = []  # (name, shape)
        self.count = 0

    def tensor(self, shape):
        return f"tensor<{'x'.join(map(str, shape))}x{self.dtype}>"

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def join_agg(self, agg, ins, out_indices, out_shape, body):
        """ins: [(value, shape, indices)]; body(args) -> lines, result."""
        name = self.fresh()
        operands = ", ".join(
            f"{v}[{', '.join(f'd{i}' for i in idx)}]" for v, _, idx in ins)
        types = ", ".join(self.tensor(s) for _, s, _ in ins)
        out = ", ".join(f"d{i}" for i in out_indices)
        self.lines.append(
            f"  {name} = ein.join_agg {agg} ins({operands} : {types}) "
            f"out[{out}] : {self.tensor(out_shape)} {{")
        args = [f"%a{i}" for i in range(len(ins))]
        self.lines.append(
            "  ^bb0(" + ", ".join(f"{a}: {self.dtype}" for a in args) + "):")
        wide = []
        for a in args:
            if self.dtype == "f32":
                wide.append(a)
            else:
                self.lines.append(f"    {a}w = arith.extf {a} : {self.dtype} to f32")
                wide.append(a + "w")
        body_lines, result = body(wide)
        self.lines += ["    " + l for l in body_lines]
        self.lines.append(f"    ein.yield {result} : f32")
        self.lines.append("  }")
        self.values.append((name, out_shape))
        return name

    def pick(self, rank=None):
        choices = [v for v in self.values if rank is None or len(v[1]) == rank]
        return self.rng.choice(choices) if choices else None

    def contraction(self):
        a, sa = self.pick(2)
        k_pos = self.rng.randrange(2)
        k = sa[k_pos]
        partners = [(v, s) for v, s in self.values
                    if len(s) == 2 and k in s and v != a]
        if not partners:
            return self.elementwise()
        b, sb = self.rng.choice(partners)
        # a's loops: d0 (kept), d1 (contracted); b's: d1 and d2.
        a_idx = [0, 1] if k_pos == 1 else [1, 0]
        kb = sb.index(k)
        b_idx = [1, 2] if kb == 0 else [2, 1]
        m, n = sa[1 - k_pos], sb[1 - kb]
        out_idx, out_shape = ([0, 2], [m, n]) if self.rng.random() < 0.7 else ([2, 0], [n, m])
        return self.join_agg("add", [(a, sa, a_idx), (b, sb, b_idx)], out_idx,
                             out_shape, lambda x: ([f"%p = arith.mulf {x[0]}, {x[1]} : f32"], "%p"))

    def elementwise(self):
        a, sa = self.pick()
        rank = len(sa)
        ins = [(a, sa, list(range(rank)))]
        out_shape, out_idx = sa, list(range(rank))
        if rank == 2 and self.rng.random() < 0.3:  # a transpose
            out_shape, out_idx = [sa[1], sa[0]], [1, 0]
        # A second operand: same shape, transposed, or a broadcast vector.
        seconds = []
        for v, s in self.values:
            if s == sa and v != a:
                seconds.append((v, s, list(range(rank))))
            if rank == 2 and s == [sa[1], sa[0]] and v != a:
                seconds.append((v, s, [1, 0]))
            if rank == 2 and len(s) == 1 and s[0] in sa:
                seconds.append((v, s, [sa.index(s[0])]))
        if seconds and self.rng.random() < 0.7:
            ins.append(self.rng.choice(seconds))
            op = self.rng.choice(["addf", "mulf", "maximumf", "subf"])
            body = lambda x: ([f"%e = arith.{op} {x[0]}, {x[1]} : f32"], "%e")
        else:
            kind = self.rng.choice(["relu", "neg", "half", "square"])
            def body(x, kind=kind):
                if kind == "relu":
                    return (["%z = arith.constant 0.0 : f32",
                             f"%e = arith.maximumf {x[0]}, %z : f32"], "%e")
                if kind == "neg":
                    return ([f"%e = arith.negf {x[0]} : f32"], "%e")
                if kind == "half":
                    return (["%h = arith.constant 0.5 : f32",
                             f"%e = arith.mulf {x[0]}, %h : f32"], "%e")
                return ([f"%e = arith.mulf {x[0]}, {x[0]} : f32"], "%e")
        return self.join_agg("none", ins, out_idx, out_shape, body)

    def reduction(self):
        a, sa = self.pick(2)
        keep = self.rng.randrange(2)
        agg = self.rng.choice(["add", "max", "min"])
        return self.join_agg(agg, [(a, sa, [0, 1])], [keep], [sa[keep]],
                             lambda x: ([], x[0]))

    def build(self):
        sizes = [8, 10, 12, 16]
        args = []
        n_args = self.rng.randrange(2, 4)
        shared = self.rng.choice(sizes)
        for i in range(n_args):
            shape = [self.rng.choice(sizes), shared] if i % 2 == 0 else [shared, self.rng.choice(sizes)]
            weight = " {ein.weight}" if i > 0 and self.rng.random() < 0.5 else ""
            args.append(f"%arg{i}: {self.tensor(shape)}{weight}")
            self.values.append((f"%arg{i}", shape))
        for _ in range(self.rng.randrange(3, 7)):
            choice = self.rng.random()
            if choice < 0.35:
                self.contraction()
            elif choice < 0.75 or not self.pick(2):
                self.elementwise()
            else:
                self.reduction()
        # The last two ops' values are the results (so little is dead).
        results = [v for v in self.values if not v[0].startswith("%arg")][-2:]
        types = ", ".join(self.tensor(s) for _, s in results)
        names = ", ".join(v for v, _ in results)
        return "\n".join(
            [f"func.func @random({', '.join(args)}) -> ({types}) {{"]
            + self.lines + [f"  return {names} : {types}", "}"])


def main():
    seed = int(sys.argv[1])
    print(f"// random_dag.py {seed}")
    print(Program(random.Random(seed)).build())


if __name__ == "__main__":
    main()
