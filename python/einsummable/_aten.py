"""ATen ops to linalg: one handler per op, over the graph make_fx traced.

Values that depend only on constants (masks built with `full`/`triu`,
`arange`s, the index tensor `repeat_interleave` makes) are evaluated here,
at trace time, with PyTorch itself; what reaches the program is a fill, a
causal mask computed from indices, a broadcast, or (any other tensor
constant) one more weight argument bound with its value.
"""

import math
import operator

import torch

from . import _linalg
from ._errors import FrontendError
from ._linalg import Value, is_float

aten = torch.ops.aten


class Const:
    """A tensor known at trace time."""

    def __init__(self, tensor):
        self.tensor = tensor


def _schema(target):
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else None


def _contains_value(x):
    if isinstance(x, Value):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_value(y) for y in x)
    if isinstance(x, dict):
        return any(_contains_value(y) for y in x.values())
    return False


def _unwrap(x):
    if isinstance(x, Const):
        return x.tensor
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(y) for y in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, torch.Tensor):
        return Const(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_wrap(y) for y in x)
    return x


HANDLERS = {}


def handles(*names):
    def register(fn):
        for name in names:
            HANDLERS["aten::" + name] = fn
        return fn
    return register


class Translator:
    """Translates one traced graph. `arguments` lists the function's
    arguments in order: (kind, name, tensor) with kind "input" or
    "weight"; constants found on the way are appended as weights."""

    def __init__(self, graph_module, arguments, locate):
        self.gm = graph_module
        self.e = _linalg.Emitter()
        self.arguments = []
        self.constants = []
        self.locate = locate
        self.placeholders = []
        for kind, name, tensor in arguments:
            if kind == "weight" and not tensor.is_floating_point():
                # An integer or boolean buffer (position or token-type
                # ids, a causal mask, a batch norm's counter) holds indices
                # and flags, never learned values: a constant of the trace,
                # so what is computed from it is computed now (a causal
                # mask attention fusion reads, positions read as slices).
                self.placeholders.append(Const(tensor))
                continue
            ssa = "%%%s%d" % ("in" if kind == "input" else "w",
                              sum(1 for a in self.arguments
                                  if a["kind"] == kind))
            value = Value(ssa, tensor.shape, tensor.dtype)
            _linalg.element_type(tensor.dtype, name)
            self.arguments.append({"kind": kind, "name": name,
                                   "value": value, "tensor": tensor})
            self.placeholders.append(value)
        self.where = None
        self.node = None  # the node being translated

    # -- driving ----------------------------------------------------------

    def run(self):
        env = {}
        placeholder = iter(self.placeholders)
        results = None
        for node in self.gm.graph.nodes:
            self.node = None
            self.where = self.locate(node)
            self.e.loc = ('loc("%s":%d:%d)' % self.where[1:]
                          if self.where and self.where[1] else None)
            if node.op == "placeholder":
                env[node] = next(placeholder)
            elif node.op == "get_attr":
                env[node] = Const(_fetch_attr(self.gm, node.target))
            elif node.op == "call_function":
                env[node] = self.call(node, env)
            elif node.op == "output":
                results = node.args[0]
                if isinstance(results, (list, tuple)):
                    results = [env.get(r) if isinstance(r, torch.fx.Node)
                               else r for r in results]
                else:
                    results = [env.get(results)
                               if isinstance(results, torch.fx.Node)
                               else results]
            else:
                raise self.error("%s nodes (%s) are not supported"
                                 % (node.op, node.target))
        self.e.loc = None
        values = []
        for i, r in enumerate(results):
            if isinstance(r, Const):
                r = self.materialize(r)
            if not isinstance(r, Value):
                raise FrontendError(
                    "the model returns %s as result %d; it must return "
                    "tensors (one, or a tuple or list of them)"
                    % (type(r).__name__, i))
            r.name  # a lazy result is made before the return
            values.append(r)
        return values

    def error(self, message):
        """A refusal at the model's line, naming the ATen op being
        translated (where the message does not already)."""
        if self.node is not None and str(self.node.target) not in message:
            message = "%s: %s" % (self.node.target, message)
        return FrontendError(message, self.where[0] if self.where else None)

    def call(self, node, env):
        def look(x):
            if isinstance(x, torch.fx.Node):
                return env[x]
            if isinstance(x, (list, tuple)):
                return type(x)(look(y) for y in x)
            if isinstance(x, dict):
                return {k: look(v) for k, v in x.items()}
            return x

        args, kwargs = look(node.args), look(node.kwargs)
        if node.target is operator.getitem:
            return args[0][args[1]]
        if not _contains_value(args) and not _contains_value(kwargs):
            # Only constants: evaluate now.
            return _wrap(node.target(*_unwrap(args), **_unwrap(kwargs)))
        name = _schema(node.target)
        handler = HANDLERS.get(name)
        if handler is None:
            raise self.error(
                "the ATen op %s is not supported by the einsummable front end "
                "(docs/frontend.md lists the ops it takes)" % node.target)
        self.node = node
        result = handler(self, node, *args, **kwargs)
        self.check(node, result)
        return result

    def check(self, node, result):
        meta = _meta(node)
        if meta is None:
            return
        if isinstance(result, Value):
            if result.shape != tuple(meta.shape) or result.dtype != meta.dtype:
                raise self.error(
                    "internal: %s made %s %s where PyTorch has %s %s"
                    % (node.target, result.dtype, list(result.shape),
                       meta.dtype, list(meta.shape)))

    # -- helpers for handlers ----------------------------------------------

    def out_meta(self):
        meta = _meta(self.node)
        if meta is None:
            raise self.error("internal: %s has no shape" % self.node.target)
        return tuple(meta.shape), meta.dtype

    def tensor(self, x):
        """`x` as a Value (a Const materialized)."""
        if isinstance(x, Value):
            return x
        if isinstance(x, Const):
            return self.materialize(x)
        raise self.error("expected a tensor, got %r" % (x,))

    def operand(self, x):
        """An elementwise operand: a Value, a Python scalar for a
        one-element constant, or a causal mask computed from the indices of
        the op that reads it."""
        if isinstance(x, Const):
            if x.tensor.numel() == 1 or _splat(x.tensor):
                return _first(x.tensor)
            mask = _causal_mask(x.tensor)
            if mask is not None:
                return self.causal_operand(tuple(x.tensor.shape),
                                           x.tensor.dtype, *mask)
            return self.materialize(x)
        return x

    def materialize(self, const):
        t = const.tensor
        dtype = t.dtype
        shape = tuple(t.shape)
        if _splat(t):
            return self.e.fill(_first(t), shape, dtype)
        if t.numel() > 0 and bool((t == t.reshape(-1)[0]).all()) or (
                t.is_floating_point() and t.numel() > 0
                and bool(torch.isnan(t).all())):
            return self.e.fill(t.reshape(-1)[0].item(), shape, dtype)
        mask = _causal_mask(t)
        if mask is not None:
            return self.causal(shape, dtype, *mask)
        name = "constant%d" % len(self.constants)
        ssa = "%%k%d" % len(self.constants)
        value = Value(ssa, shape, dtype)
        self.constants.append(name)
        self.arguments.append({"kind": "weight", "name": name,
                               "value": value, "tensor": t.clone()})
        return value

    def causal_operand(self, shape, dtype, diagonal, low, high):
        """A mask `high` above diagonal `diagonal` (key > query + diagonal)
        and `low` on and below, computed from the loop indices."""
        ty = _linalg.element_type(dtype)

        def fn(b, indices):
            above = _above(b, indices, diagonal)
            if dtype == torch.bool:
                # The comparison itself (a select on it is the form
                # ein-fuse-composites reads in attention), or its negation.
                return above if high else b.op(
                    "arith.xori %s, %s" % (above, b.const(True, "i1")), "i1")
            return b.select(above, b.const(high, ty), b.const(low, ty))

        return _linalg.Indexed(shape, dtype, fn)

    def causal(self, shape, dtype, diagonal, low, high):
        """The causal mask as a tensor of its own."""
        mask = self.causal_operand(shape, dtype, diagonal, low, high)
        return self.e.elementwise([mask], dtype, lambda b, s: s[0],
                                  compute=False, out_shape=shape)

    def elementwise(self, operands, fn, compute=None):
        shape, dtype = self.out_meta()
        ops = [self.operand(x) for x in operands]
        if compute is None:
            floats = [x.dtype for x in ops
                      if isinstance(x, Value) and is_float(x.dtype)]
            if is_float(dtype):
                compute = _linalg.compute_type(dtype)
            elif floats:
                compute = _linalg.compute_type(floats[0])
            elif any(isinstance(x, float) for x in ops):
                compute = "f32"
        return self.e.elementwise(ops, dtype, fn, compute=compute,
                                  out_shape=shape)


def _splat(t):
    """Whether `t` is one value expanded (every stride 0): a constant
    shaped like a tensor, held without its size in memory."""
    return t.numel() > 1 and all(s == 0 for s in t.stride())


def _first(t):
    """The first element of `t` as a Python scalar (no copy of `t`)."""
    return t[(0,) * t.dim()].item()


def _above(b, indices, diagonal):
    """Whether the key index (last) is above the query's (second to last)
    plus `diagonal`: the positions a causal mask hides."""
    row, col = indices[-2], indices[-1]
    if diagonal:
        row = b.op("arith.addi %s, %s" % (
            row, b.op("arith.constant %d" % diagonal, "index")), "index")
    return b.cmpi("sgt", col, row)


def _meta(node):
    """What the trace recorded of a node's (first) result: an object with
    shape and dtype (PyTorch 1.13's tensor_meta, PyTorch 2's val)."""
    for key in ("tensor_meta", "val"):
        meta = node.meta.get(key)
        if isinstance(meta, (tuple, list)) and meta and not (
                hasattr(meta, "shape") and hasattr(meta, "dtype")):
            meta = meta[0]  # an op with several results: the first
        if meta is not None and hasattr(meta, "shape") and \
                hasattr(meta, "dtype"):
            return meta
    return None


def _fetch_attr(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj.detach() if isinstance(obj, torch.Tensor) else obj


def _causal_mask(t):
    """(diagonal, low, high) when `t` (at least 2-D, the same matrix
    everywhere) holds `high` strictly above a diagonal and `low` on and
    below it, with high != low."""
    if t.dim() < 2 or not (t.is_floating_point() or t.dtype == torch.bool):
        return None
    t = t.cpu()
    rows, cols = t.shape[-2], t.shape[-1]
    m = t.reshape(-1, rows, cols)
    if not bool((m == m[0]).all()):
        return None
    m = m[0]
    high, low = m[0, -1].item(), m[-1, 0].item()
    if high == low or rows < 2 or cols < 2:
        return None
    # The diagonal from the first row that holds `high` anywhere, then the
    # whole matrix checked against it.
    rows_with = (m == high).any(dim=1).nonzero()
    if len(rows_with) == 0:
        return None
    i = int(rows_with[0])
    j = int((m[i] == high).nonzero()[0])
    diagonal = j - 1 - i
    above = torch.arange(cols).unsqueeze(0) > \
        torch.arange(rows).unsqueeze(1) + diagonal
    expected = torch.where(above, torch.tensor(high, dtype=m.dtype),
                           torch.tensor(low, dtype=m.dtype))
    if torch.equal(expected, m):
        return diagonal, low, high
    return None


# -- elementwise ---------------------------------------------------------

def _promoted(b, s):
    """Arithmetic operands with booleans (a comparison's result, which
    elementwise bodies keep as i1 for selects) in the other operand's
    type, as PyTorch promotes them."""
    wide = [b.types[x] for x in s if b.types[x] != "i1"]
    return [b.cast(x, wide[0]) if wide and b.types[x] == "i1" else x
            for x in s]


def _arith(fop, iop):
    return lambda b, s: b.binary(fop, iop, *_promoted(b, s[:2]))


def _hiding_mask(x):
    """(diagonal, value) when `x` is a constant causal mask that adds 0 on
    and below a diagonal and hides the rest (-inf, or at or below -1e30):
    adding it is selecting `value` above the diagonal, the form
    ein-fuse-composites recognises in attention."""
    if not isinstance(x, Const) or x.tensor.numel() == 1:
        return None
    mask = _causal_mask(x.tensor)
    if mask is None:
        return None
    diagonal, low, high = mask
    if low == 0 and high <= -1e30:
        return tuple(x.tensor.shape), x.tensor.dtype, diagonal, high
    return None


def _hide(t, x, hiding):
    """x plus a constant causal mask that hides (`_hiding_mask`): the
    select ein-fuse-composites reads in attention."""
    shape, dtype, diagonal, value = hiding
    hidden = _linalg.Indexed(shape, torch.bool,
                             lambda b, indices: _above(b, indices, diagonal))
    return t.elementwise([x, hidden], lambda b, s: b.select(
        s[1], b.const(value, b.types[s[0]]), s[0]))


@handles("add", "sub")
def _add_sub(t, node, a, b, alpha=1):
    fop, iop = ("arith.addf", "arith.addi") \
        if _schema(node.target) == "aten::add" else ("arith.subf",
                                                     "arith.subi")
    hiding = _hiding_mask(b) if fop == "arith.addf" and alpha == 1 else None
    if hiding is None and fop == "arith.addf" and alpha == 1:
        hiding = _hiding_mask(a)
        if hiding is not None:
            a, b = b, a
    if hiding is not None:
        return _hide(t, a, hiding)

    def body(bb, s):
        s = _promoted(bb, s)
        y = s[1]
        if alpha != 1:
            y = bb.binary("arith.mulf", "arith.muli", y,
                          bb.const(alpha, bb.types[y]))
        return bb.binary(fop, iop, s[0], y)
    return t.elementwise([a, b], body)


@handles("mul")
def _mul(t, node, a, b):
    return t.elementwise([a, b], _arith("arith.mulf", "arith.muli"))


@handles("div")
def _div(t, node, a, b, rounding_mode=None):
    shape, dtype = t.out_meta()
    if rounding_mode is not None:
        def body(bb, s):
            q = bb.binary("arith.divf", None, s[0], s[1])
            return _floor(bb, q) if rounding_mode == "floor" \
                else _trunc(bb, q)
        # Integers divide in f64: exact quotients below 2**53.
        return t.elementwise([a, b], body, compute="f64"
                             if not is_float(dtype) else None)
    if isinstance(t.operand(b), float) and is_float(dtype):
        # By a constant: a product with its reciprocal, the scale
        # ein-fuse-composites reads in attention (within an ulp of the
        # quotient).
        inverse = 1.0 / t.operand(b)
        return t.elementwise([a, inverse], _arith("arith.mulf", None))
    return t.elementwise([a, b], _arith("arith.divf", "arith.divsi"))


def _floor(b, x):
    """floor(x) as x less its fraction (program.json has no math.floor;
    remf is exact, and so is the difference)."""
    one = b.const(1.0, b.types[x])
    return b.binary("arith.subf", None, x, _python_mod(b, x, one))


def _trunc(b, x):
    one = b.const(1.0, b.types[x])
    return b.binary("arith.subf", None, x, b.binary("arith.remf", None, x,
                                                    one))


def _python_mod(b, a, d):
    """a mod d with the sign of d (Python's %, PyTorch's remainder)."""
    ty = b.types[a]
    floating = ty in ("f16", "bf16", "f32", "f64")
    r = b.binary("arith.remf", "arith.remsi", a, d)
    zero = b.const(0, ty)
    less = (lambda x: b.cmpf("olt", x, zero)) if floating else (
        lambda x: b.cmpi("slt", x, zero))
    nonzero = b.cmpf("une", r, zero) if floating else b.cmpi("ne", r, zero)
    signs = b.op("arith.xori %s, %s" % (less(r), less(d)), "i1")
    fix = b.op("arith.andi %s, %s" % (nonzero, signs), "i1")
    return b.select(fix, b.binary("arith.addf", "arith.addi", r, d), r)


@handles("floor", "ceil", "trunc")
def _rounding(t, node, a):
    name = _schema(node.target)
    if name == "aten::ceil":
        return t.elementwise([a], lambda b, s: b.unary("arith.negf", _floor(
            b, b.unary("arith.negf", s[0]))))
    return t.elementwise([a], lambda b, s: (
        _floor if name == "aten::floor" else _trunc)(b, s[0]))


@handles("remainder")
def _remainder(t, node, a, b):
    return t.elementwise([a, b], lambda bb, s: _python_mod(bb, *s))


@handles("fmod")
def _fmod(t, node, a, b):
    return t.elementwise([a, b], _arith("arith.remf", "arith.remsi"))


@handles("floor_divide")
def _floor_divide(t, node, a, b):
    """a // b: floor(a / b), integers divided in f64 (exact below 2**53);
    integers divided by a constant: the truncated quotient less one where
    the remainder is nonzero and its sign differs from the divisor's."""
    shape, dtype = t.out_meta()
    if is_float(dtype) or not isinstance(t.operand(b), int):
        return _div(t, node, a, b, "floor")

    def body(bb, s):
        x, y = s
        q = bb.binary(None, "arith.divsi", x, y)
        adjust = bb.cmpi("ne", _python_mod(bb, x, y),
                         bb.binary(None, "arith.remsi", x, y))
        return bb.select(adjust, bb.binary(None, "arith.subi", q,
                                           bb.const(1, bb.types[q])), q)
    return t.elementwise([a, b], body)


@handles("neg")
def _neg(t, node, a):
    def body(b, s):
        if b.types[s[0]] in ("i32", "i64"):
            return b.op("arith.subi %s, %s" % (b.const(0, b.types[s[0]]),
                                                s[0]), b.types[s[0]])
        return b.unary("arith.negf", s[0])
    return t.elementwise([a], body)


def _unary_math(opname):
    def handler(t, node, a):
        return t.elementwise([a], lambda b, s: b.unary(opname, s[0]))
    return handler


for _name, _op in [("rsqrt", "math.rsqrt"), ("sqrt", "math.sqrt"),
                   ("exp", "math.exp"), ("log", "math.log"),
                   ("tanh", "math.tanh"), ("erf", "math.erf"),
                   ("abs", "math.absf"), ("sin", "math.sin"),
                   ("cos", "math.cos"), ("log1p", "math.log1p"),
                   ("exp2", "math.exp2"), ("log2", "math.log2")]:
    HANDLERS["aten::" + _name] = _unary_math(_op)


def _sigmoid_of(b, x):
    one = b.const(1.0, b.types[x])
    e = b.unary("math.exp", b.unary("arith.negf", x))
    return b.binary("arith.divf", None, one, b.binary("arith.addf", None,
                                                      one, e))


@handles("sigmoid")
def _sigmoid(t, node, a):
    return t.elementwise([a], lambda b, s: _sigmoid_of(b, s[0]))


@handles("silu")
def _silu(t, node, a):
    return t.elementwise(
        [a], lambda b, s: b.binary("arith.mulf", None, s[0],
                                   _sigmoid_of(b, s[0])))


@handles("reciprocal")
def _reciprocal(t, node, a):
    return t.elementwise([a], lambda b, s: b.binary(
        "arith.divf", None, b.const(1.0, b.types[s[0]]), s[0]))


@handles("relu")
def _relu(t, node, a):
    return t.elementwise([a], lambda b, s: b.binary(
        "arith.maximumf", "arith.maxsi", s[0], b.const(0, b.types[s[0]])))


@handles("gelu")
def _gelu(t, node, a, approximate="none"):
    def body(b, s):
        x = s[0]
        ty = b.types[x]
        half = b.const(0.5, ty)
        one = b.const(1.0, ty)
        if approximate == "tanh":
            x3 = b.binary("arith.mulf", None, b.binary("arith.mulf", None,
                                                       x, x), x)
            inner = b.binary("arith.addf", None, x, b.binary(
                "arith.mulf", None, b.const(0.044715, ty), x3))
            inner = b.binary("arith.mulf", None,
                             b.const(math.sqrt(2.0 / math.pi), ty), inner)
            g = b.unary("math.tanh", inner)
        else:
            g = b.unary("math.erf", b.binary(
                "arith.mulf", None, x, b.const(1.0 / math.sqrt(2.0), ty)))
        return b.binary("arith.mulf", None, b.binary("arith.mulf", None,
                                                     half, x),
                        b.binary("arith.addf", None, one, g))
    return t.elementwise([a], body)


@handles("pow")
def _pow(t, node, a, b):
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        exponent = float(b)

        def body(bb, s):
            x = s[0]
            if exponent == 2.0:
                return bb.binary("arith.mulf", "arith.muli", x, x)
            if exponent == 1.0:
                return x
            if exponent == 0.5:
                return bb.unary("math.sqrt", x)
            if exponent == -0.5:
                return bb.unary("math.rsqrt", x)
            if exponent == 3.0:
                return bb.binary("arith.mulf", "arith.muli",
                                 bb.binary("arith.mulf", "arith.muli", x, x),
                                 x)
            return bb.binary("math.powf", None, x,
                             bb.const(exponent, bb.types[x]))
        return t.elementwise([a], body)
    return t.elementwise([a, b], lambda bb, s: bb.binary("math.powf", None,
                                                          s[0], s[1]))


@handles("maximum", "minimum")
def _max_min(t, node, a, b):
    if _schema(node.target) == "aten::maximum":
        return t.elementwise([a, b], _arith("arith.maximumf", "arith.maxsi"))
    return t.elementwise([a, b], _arith("arith.minimumf", "arith.minsi"))


@handles("clamp", "clamp_min", "clamp_max")
def _clamp(t, node, a, lo=None, hi=None):
    if _schema(node.target) == "aten::clamp_max":
        lo, hi = None, lo

    def body(b, s):
        x = s[0]
        if lo is not None:
            x = b.binary("arith.maximumf", "arith.maxsi", x,
                         b.const(lo, b.types[x]))
        if hi is not None:
            x = b.binary("arith.minimumf", "arith.minsi", x,
                         b.const(hi, b.types[x]))
        return x
    return t.elementwise([a], body)


_PREDICATES = {"eq": ("oeq", "eq"), "ne": ("une", "ne"), "lt": ("olt", "slt"),
               "le": ("ole", "sle"), "gt": ("ogt", "sgt"),
               "ge": ("oge", "sge")}


def _compare(name):
    fpred, ipred = _PREDICATES[name]

    def handler(t, node, a, b):
        def body(bb, s):
            x, y = s
            if bb.types[x] == "i1":
                x = bb.cast(x, "i64")
            if bb.types[y] == "i1":
                y = bb.cast(y, "i64")
            if bb.types[x] in ("f16", "bf16", "f32", "f64") or \
                    bb.types[y] in ("f16", "bf16", "f32", "f64"):
                x, y = bb.cast(x, "f64" if "f64" in (bb.types[x],
                                                      bb.types[y])
                               else "f32"), bb.cast(
                    y, "f64" if "f64" in (bb.types[x], bb.types[y])
                    else "f32")
                return bb.cmpf(fpred, x, y)
            return bb.cmpi(ipred, x, y)
        return t.elementwise([a, b], body, compute=False)
    return handler


for _name in _PREDICATES:
    HANDLERS["aten::" + _name] = _compare(_name)


def _as_compute(b, x, ty):
    return b.cast(x, ty) if b.types[x] != ty else x


def _choose(t, cond, a, b):
    """where(cond, a, b), elementwise with broadcasting."""
    shape, dtype = t.out_meta()
    ty = _linalg.compute_type(dtype)

    def body(bb, s):
        c = s[0] if bb.types[s[0]] == "i1" else bb.cast(s[0], "i1")
        return bb.select(c, _as_compute(bb, s[1], ty),
                         _as_compute(bb, s[2], ty))
    return t.elementwise([cond, a, b], body, compute=False)


@handles("where")
def _where(t, node, cond, a, b):
    if isinstance(cond, Const) and cond.tensor.dtype == torch.bool:
        mask = _causal_mask(cond.tensor)
        if mask is not None and not mask[2]:
            # Keeping what is on and below the diagonal (a tril mask) is
            # replacing what is above it: `select(key > query, b, a)`.
            cond, a, b = Const(~cond.tensor), b, a
    return _choose(t, cond, a, b)


@handles("masked_fill")
def _masked_fill(t, node, x, mask, value):
    return _choose(t, mask, value, x)


@handles("logical_not")
def _logical_not(t, node, a):
    def body(b, s):
        x = s[0] if b.types[s[0]] == "i1" else b.cast(s[0], "i1")
        return b.op("arith.xori %s, %s" % (x, b.const(True, "i1")), "i1")
    return t.elementwise([a], body, compute=False)


def _bitwise(opname, logical):
    """and/or/xor: on booleans (masks) as i1, on integers bit by bit; the
    logical_* forms read any operand as a boolean (nonzero)."""
    def handler(t, node, a, b):
        shape, dtype = t.out_meta()
        ty = _linalg.element_type(dtype)

        def body(bb, s):
            x, y = (bb.cast(v, "i1") if logical or ty == "i1" else
                    _as_compute(bb, v, ty) for v in s)
            out = bb.op("%s %s, %s" % (opname, x, y), bb.types[x])
            return out if bb.types[out] == ty else bb.cast(out, ty)
        return t.elementwise([a, b], body, compute=False)
    return handler


for _name, _op in (("and", "arith.andi"), ("or", "arith.ori"),
                   ("xor", "arith.xori")):
    HANDLERS["aten::bitwise_" + _name] = _bitwise(_op, False)
    HANDLERS["aten::__%s__" % _name] = _bitwise(_op, False)
    HANDLERS["aten::logical_" + _name] = _bitwise(_op, True)


@handles("bitwise_not")
def _bitwise_not(t, node, a):
    shape, dtype = t.out_meta()
    ty = _linalg.element_type(dtype)
    if is_float(dtype):
        raise t.error("bitwise_not of a float tensor")
    return t.elementwise([a], lambda b, s: b.op("arith.xori %s, %s" % (
        s[0], b.const(True if ty == "i1" else -1, ty)), ty), compute=False)


@handles("any", "all")
def _any_all(t, node, a, dim=None, keepdim=False):
    """Whether any (all) elements are nonzero: the maximum (minimum) of 1
    for nonzero and 0 for zero, in f32 (a reduction writes floats), then
    compared with 0.5 where it is read (a boolean, fused into its reader)."""
    x = t.tensor(a)
    dims = _dims(x, dim)
    kind = "max" if _schema(node.target) == "aten::any" else "min"

    def flag(b, v):
        return b.select(b.cmpf("une", v, b.const(0.0, "f32")),
                        b.const(1.0, "f32"), b.const(0.0, "f32"))
    y = t.e.reduce(x, dims, kind, pre=flag, acc_dtype=torch.float32)
    y = _keep(t, y, x, dims, keepdim)
    return t.elementwise([y, 0.5], lambda b, s: b.cmpf("ogt", s[0], s[1]),
                         compute="f32")


@handles("_to_copy", "convert_element_type", "to")
def _to_copy(t, node, a, *args, **kwargs):
    shape, dtype = t.out_meta()
    return t.e.convert(t.tensor(a), dtype)


HANDLERS["prims::convert_element_type"] = _to_copy


@handles("clone", "contiguous", "detach", "alias", "lift_fresh_copy",
         "lift_fresh", "dropout")
def _identity(t, node, a, *args, **kwargs):
    if _schema(node.target) == "aten::dropout" and len(args) > 1 and args[1]:
        raise t.error("dropout in training mode; call model.eval() first")
    return t.tensor(a)


@handles("_assert_tensor_metadata", "_assert_scalar",
         "sym_constrain_range_for_size", "_assert_async")
def _assertion(t, node, *args, **kwargs):
    # Checks PyTorch 2 records in traced graphs; the trace already held.
    return None


@handles("repeat_interleave")
def _repeat_interleave(t, node, a, repeats=None, dim=None, output_size=None):
    x = t.tensor(a)
    if isinstance(repeats, Const) and repeats.tensor.numel() == 1:
        repeats = int(repeats.tensor.item())
    if not isinstance(repeats, int) or dim is None:
        raise t.error("repeat_interleave with per-index or flattened "
                      "repeats is not supported")
    return t.e.repeat_interleave(x, dim % x.rank, repeats)


# -- contractions --------------------------------------------------------

@handles("mm", "bmm")
def _mm(t, node, a, b):
    return t.e.matmul(t.tensor(a), t.tensor(b))


@handles("addmm")
def _addmm(t, node, bias, a, b, beta=1, alpha=1, product=None):
    if product is None:
        product = t.e.matmul(t.tensor(a), t.tensor(b))

    def body(bb, s):
        p = s[0]
        if alpha != 1:
            p = bb.binary("arith.mulf", None, p, bb.const(alpha, bb.types[p]))
        q = s[1]
        if beta != 1:
            q = bb.binary("arith.mulf", None, q, bb.const(beta, bb.types[q]))
        return bb.binary("arith.addf", None, p, q)
    return t.elementwise([product, bias], body)


@handles("baddbmm")
def _baddbmm(t, node, bias, a, b, beta=1, alpha=1):
    """beta * bias + alpha * (a @ b), batched (nn.MultiheadAttention adds
    its mask to the scores so): the product, then one elementwise op."""
    product = t.e.matmul(t.tensor(a), t.tensor(b))
    hiding = _hiding_mask(bias)
    if hiding is not None and beta == 1 and alpha == 1:
        return _hide(t, product, hiding)  # a causal attn_mask
    if beta == 0:  # PyTorch ignores the bias then (NaN included)
        return t.elementwise([product], lambda bb, s: s[0] if alpha == 1
                             else bb.binary("arith.mulf", None, s[0],
                                            bb.const(alpha, bb.types[s[0]])))
    return _addmm(t, node, bias, a, b, beta, alpha, product)


@handles("linear")
def _linear(t, node, x, w, bias=None):
    x, w = t.tensor(x), t.tensor(w)
    lead = x.shape[:-1]
    flat = t.e.reshape(x, (math.prod(lead), x.shape[-1]))
    y = t.e.matmul(flat, t.e.transpose(w, [1, 0]))
    y = t.e.reshape(y, lead + (w.shape[0],))
    if bias is not None:
        y = t.e.elementwise([y, t.tensor(bias)], y.dtype,
                            lambda b, s: b.binary("arith.addf", None, *s),
                            compute=_linalg.compute_type(y.dtype))
    return y


# -- views ---------------------------------------------------------------

@handles("view", "_unsafe_view", "reshape", "_reshape_alias")
def _view(t, node, a, shape, *rest):
    out_shape, _ = t.out_meta()
    return t.e.reshape(t.tensor(a), out_shape)


@handles("as_strided", "as_strided_")
def _as_strided(t, node, a, size, stride, storage_offset=None):
    # Functionalization replays some views as as_strided (convnext's
    # permutes around a layer norm on a 1x1 map; PyTorch 2 keeps the
    # metadata-only in-place form, as_strided_, before a flatten after
    # adaptive pooling: its result is the view). Over a value (dense, row
    # major) it is a permutation of a reshape when its strides, dimensions
    # of one element aside, are a row-major layout of all the elements
    # from offset 0: read in descending stride order, then permuted.
    x = t.tensor(a)
    size, stride = [int(d) for d in size], [int(s) for s in stride]

    def dense(size, stride):
        # Dimensions of one element aside, a row-major layout of all the
        # elements in some order of the dimensions.
        kept = [d for d in range(len(size)) if size[d] != 1]
        order = sorted(kept, key=lambda d: -stride[d])
        expected = 1
        for d in reversed(order):
            if stride[d] != expected:
                return None
            expected *= size[d]
        return kept, order

    # The strides index the source's storage: it must be row-major itself.
    source = _meta(node.args[0]) if hasattr(node.args[0], "meta") else None
    source_stride = getattr(source, "stride", None)
    if callable(source_stride):
        source_stride = source_stride()
    source_layout = (dense(list(x.shape), list(source_stride))
                     if source_stride is not None else None)
    row_major = source_stride is None or (
        source_layout is not None and source_layout[0] == source_layout[1])
    layout = dense(size, stride)
    if (not layout or not row_major or storage_offset or
            math.prod(size) != math.prod(x.shape)):
        raise t.error("as_strided: only a permutation of a dense view of "
                      "the whole tensor is supported (sizes %s, strides %s, "
                      "offset %s over %s)" % (size, stride,
                                              storage_offset or 0,
                                              list(x.shape)))
    kept, order = layout
    y = t.e.reshape(x, [size[d] for d in order])
    perm = [order.index(d) for d in kept]
    if perm != sorted(perm):
        y = t.e.transpose(y, perm)
    return t.e.reshape(y, size)


@handles("unsqueeze", "squeeze", "flatten", "unflatten")
def _unsqueeze(t, node, a, *args):
    out_shape, _ = t.out_meta()
    return t.e.reshape(t.tensor(a), out_shape)


@handles("permute")
def _permute(t, node, a, dims):
    return t.e.transpose(t.tensor(a), list(dims))


@handles("transpose")
def _transpose(t, node, a, d0, d1):
    x = t.tensor(a)
    perm = list(range(x.rank))
    d0, d1 = d0 % x.rank, d1 % x.rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return t.e.transpose(x, perm)


@handles("t")
def _t(t, node, a):
    x = t.tensor(a)
    return t.e.transpose(x, [1, 0]) if x.rank == 2 else x


@handles("expand")
def _expand(t, node, a, size, implicit=False):
    out_shape, _ = t.out_meta()
    return t.e.broadcast_to(t.tensor(a), out_shape)


def _slice_of(t, x, dim, start, end, step=1):
    dim %= x.rank
    size = x.shape[dim]
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    if step < 1:
        raise t.error("a slice with step %d; steps must be positive" % step)
    if step > 1 and end > start:
        return _strided_slice(t, x, dim, start, end, step)
    offsets = [0] * x.rank
    sizes = list(x.shape)
    offsets[dim] = start
    sizes[dim] = end - start
    if end == start:
        # Nothing (Phi-3's rotary split passes no dimension through): a
        # constant of no elements, never emitted; cat drops it.
        return Const(torch.empty(sizes, dtype=x.dtype))
    return t.e.extract_slice(x, offsets, sizes)


def _strided_slice(t, x, dim, start, end, step):
    """Every `step`-th element of [start, end) along `dim`: whole steps
    viewed as [count, step] and their first column, and the last element
    on its own when the range ends inside a step (never padded: a padding
    nobody reads would be written for nothing)."""
    count = (end - start + step - 1) // step
    whole = min(count, (x.shape[dim] - start) // step)
    pieces = []
    if whole:
        pieces.append(_whole_steps(t, x, dim, start, whole, step))
    if whole < count:
        last = start + whole * step
        pieces.append(_slice_of(t, x, dim, last, last + 1))
    return t.e.concat(pieces, dim)


def _whole_steps(t, x, dim, start, count, step):
    y = _slice_of(t, x, dim, start, start + count * step)
    shape = list(y.shape)
    split = shape[:dim] + [count, step] + shape[dim + 1:]
    y = t.e.reshape(y, split)
    offsets = [0] * len(split)
    sizes = list(split)
    sizes[dim + 1] = 1
    return t.e.extract_slice(y, offsets, sizes, drop=(dim + 1,))


@handles("slice")
def _slice(t, node, a, dim=0, start=None, end=None, step=1):
    return _slice_of(t, t.tensor(a), dim, start, end, step)


@handles("narrow")
def _narrow(t, node, a, dim, start, length):
    return _slice_of(t, t.tensor(a), dim, start, start + length)


@handles("select")
def _select(t, node, a, dim, index):
    x = t.tensor(a)
    dim %= x.rank
    index = index + x.shape[dim] if index < 0 else index
    offsets = [0] * x.rank
    sizes = list(x.shape)
    offsets[dim] = index
    sizes[dim] = 1
    return t.e.extract_slice(x, offsets, sizes, drop=(dim,))


@handles("split", "split_with_sizes")
def _split(t, node, a, sizes, dim=0):
    x = t.tensor(a)
    dim %= x.rank
    total = x.shape[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, total - s) for s in range(0, total, sizes)]
    pieces, at = [], 0
    for size in sizes:
        pieces.append(_slice_of(t, x, dim, at, at + size))
        at += size
    return pieces


@handles("unbind")
def _unbind(t, node, a, dim=0):
    x = t.tensor(a)
    dim %= x.rank
    return [_select(t, node, x, dim, i) for i in range(x.shape[dim])]


@handles("cat")
def _cat(t, node, tensors, dim=0):
    values = [t.tensor(x) for x in tensors if not (
        isinstance(x, Const) and x.tensor.numel() == 0)]
    return t.e.concat(values, dim)


@handles("stack")
def _stack(t, node, tensors, dim=0):
    out_shape, _ = t.out_meta()
    values = [t.tensor(x) for x in tensors]
    dim %= len(out_shape)
    parts = [t.e.reshape(v, v.shape[:dim] + (1,) + v.shape[dim:])
             for v in values]
    return t.e.concat(parts, dim)


# -- reads at indices: index_select, embedding, gather, x[ids] --------------
# Three forms, from the cheapest: constant indices that are runs (slices put
# together) or repeats (a floordiv read); rows of a table picked by indices
# along its first dimension (a lookup generic with tensor.extract, which
# ein-import makes ein.gather); and any other read at indices as a sum over
# the indexed dimension of the elements whose position equals the index (a
# join-agg that reads the indices as data, 0 elsewhere: a one-hot
# contraction, O(size of that dimension) per result element).

_MOST_SLICES = 4  # more runs of constant indices read as a gather


def _index_select(t, node, a, dim, index):
    x = t.tensor(a)
    dim %= x.rank
    if isinstance(index, Const):
        idx = [int(i) for i in index.tensor.reshape(-1).tolist()]
        n = x.shape[dim]
        idx = [i + n if i < 0 else i for i in idx]
        # Each index repeated c times in order (repeat_interleave): read
        # with a floordiv, as GQA's key/value heads are.
        if n > 0 and len(idx) % n == 0:
            c = len(idx) // n
            if idx == [i // c for i in range(len(idx))]:
                return t.e.repeat_interleave(x, dim, c)
        # Otherwise runs of consecutive indices (a slice) or of one index
        # (a slice of one, broadcast), put together.
        runs = _runs(idx)
        if len(runs) <= _MOST_SLICES:
            pieces = []
            for first, count, step in runs:
                piece = _slice_of(t, x, dim, first, first + (
                    count if step else 1))
                if not step and count > 1:
                    size = list(piece.shape)
                    size[dim] = count
                    piece = t.e.broadcast_to(piece, tuple(size))
                pieces.append(piece)
            return t.e.concat(pieces, dim)
        index = Const(torch.tensor(idx, dtype=torch.int64))
    ids = t.tensor(index)
    if ids.rank != 1:
        raise t.error("index_select with a rank-%d index; it takes a 1-D "
                      "one" % ids.rank)
    if dim == 0:
        return _lookup(t, x, ids)
    shape = x.shape[:dim] + ids.shape + x.shape[dim + 1:]
    return _read_at(t, x, [dim], [(ids, [("d", dim)])], shape)


HANDLERS["aten::index_select"] = _index_select


def _is_position(b, idx, loop):
    """Whether the integer index `idx` is loop `loop`'s position."""
    return b.cmpi("eq", idx, b.from_index(b.index(loop), b.types[idx]))


def _runs(idx):
    """`idx` as runs (first, count, step): step 1 for consecutive indices,
    0 for one index repeated."""
    runs = []
    for i in idx:
        if runs:
            first, count, step = runs[-1]
            if count == 1 and i in (first, first + 1):
                runs[-1] = (first, 2, i - first)
                continue
            if i == first + step * count:
                runs[-1] = (first, count + 1, step)
                continue
        runs.append((i, 1, 1))
    return runs


def _lookup(t, table, ids):
    """table[ids[i...], t...]: the rows the integer tensor `ids` names (an
    embedding), as the generic ein-import makes ein.gather of."""
    w = t.tensor(table)
    shape = ids.shape + w.shape[1:]
    r = ids.rank
    if not is_float(w.dtype):
        # A table of integers: ein.gather writes floats, so its rows are
        # read as a one-hot sum (in f64).
        return _read_at(t, w, [0], [(ids, _linalg.identity(r))], shape,
                        {d: r + d - 1 for d in range(1, w.rank)})
    w.name  # the table itself, read whole at data-dependent rows

    def body(b, s):
        at = [b.to_index(s[0])] + [b.index(r + k) for k in range(w.rank - 1)]
        name = b.e.fresh("s")
        b.lines.append("%s = tensor.extract %s[%s] : %s"
                       % (name, w.name, ", ".join(at), w.type))
        b.types[name] = _linalg.element_type(w.dtype)
        return name
    return t.e.generic([(ids, _linalg.identity(r))], shape, w.dtype, body)


def _read_at(t, x, dims, indices, shape, place=None):
    """out[p] = x[p with each of `dims` replaced by its index], each index
    a (tensor, its read expressions in out's loops): for each of `dims` a
    summed loop n over it, and the sum of x where every index equals its n
    (0 elsewhere). x's other dimensions d are read along out's loop
    `place[d]` (d by default; what lies beyond out's size is not read:
    PyTorch's gather reads only what its index covers). Integers are read
    and summed in f64 (exact below 2**53: block kernels accumulate in
    floats), then converted."""
    integer = None if is_float(x.dtype) else x.dtype
    acc = torch.float64 if integer else x.dtype
    rank = len(shape)
    place = place or {}
    loops = {d: rank + i for i, d in enumerate(dims)}
    x_exprs = [("d", loops[d] if d in loops else place.get(d, d))
               for d in range(x.rank)]
    sizes = [s if d in loops else shape[e[1]]
             for d, (s, e) in enumerate(zip(x.shape, x_exprs))]
    if tuple(sizes) != x.shape:
        x = t.e.extract_slice(x, [0] * x.rank, sizes)
    operands = [(x, x_exprs)] + [(t.tensor(i), list(e))
                                 for i, e in indices]
    zero = t.e.fill(0, shape, acc)
    ty = _linalg.element_type(acc)

    def body(b, s):
        hit = None
        for k, d in enumerate(dims):
            same = _is_position(b, s[1 + k], loops[d])
            hit = same if hit is None else b.op(
                "arith.andi %s, %s" % (hit, same), "i1")
        v = b.select(hit, b.cast(s[0], ty), b.const(0.0, ty))
        return b.binary("arith.addf", None, s[-1], v)
    y = t.e.generic(operands, shape, acc, body,
                    iterators=["parallel"] * rank + ["reduction"] * len(dims),
                    out_exprs=_linalg.identity(rank), init=zero)
    return t.e.convert(y, integer) if integer else y


@handles("gather")
def _gather(t, node, a, dim, index, sparse_grad=False):
    x, ids = t.tensor(a), t.tensor(index)
    dim %= x.rank
    return _read_at(t, x, [dim], [(ids, _linalg.identity(ids.rank))],
                    ids.shape)


@handles("index", "_unsafe_index")
def _index(t, node, a, indices):
    """x[i], x[:, i], x[i, j]: index tensors known at trace time as
    selections (`_index_constant`) where they fit; x[ids] at run-time ids
    as a lookup; otherwise (run-time indices, or constant ones varying
    along several axes) index tensors at consecutive dimensions, broadcast
    together, read as a one-hot sum (the result's dimensions are x's
    before them, the indices', then x's after them)."""
    x = t.tensor(a)
    shape, _ = t.out_meta()
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    for _, i in given:
        dtype = i.tensor.dtype if isinstance(i, Const) else i.dtype
        if dtype in (torch.bool, torch.uint8):
            raise t.error("indexing with a boolean mask (x[mask]) gives a "
                          "result whose shape depends on the mask's values; "
                          "use torch.where or masked_fill")
    if all(isinstance(i, Const) for _, i in given):
        y = _index_constant(t, node, x, indices)
        if y is not None:
            return y
    dims = [d for d, _ in given]
    first = dims[0]
    if dims != list(range(first, first + len(dims))):
        raise t.error("indexing with index tensors at dimensions %s that "
                      "are not consecutive, computed at run time or not "
                      "one selection each, is not supported" % dims)
    if len(given) == 1 and first == 0 and not isinstance(given[0][1], Const):
        ids = given[0][1]
        flat = t.e.reshape(ids, (math.prod(ids.shape),))
        return t.e.reshape(_index_select(t, None, x, 0, flat), shape)
    # The indices' broadcast dimensions, in out's loops from `first`.
    count = len(shape) - x.rank + len(dims)
    exprs = []
    for _, i in given:
        i_shape = tuple(i.tensor.shape if isinstance(i, Const) else i.shape)
        offset = first + count - len(i_shape)
        exprs.append([("c", 0) if size == 1 and shape[offset + k] != 1
                      else ("d", offset + k)
                      for k, size in enumerate(i_shape)])
    place = {d: d + count - len(dims) for d in range(first + len(dims),
                                                     x.rank)}
    return _read_at(t, x, dims, [(i, e) for (_, i), e in zip(given, exprs)],
                    shape, place)


@handles("index_put")
def _index_put(t, node, a, indices, values, accumulate=False):
    """x[mask] = v (and += v) with one boolean mask over x's leading
    dimensions and one value: where(mask, v, x) (x + where(mask, v, 0))."""
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    mask = given[0][1] if len(given) == 1 and given[0][0] == 0 else None
    dtype = None if mask is None else (
        mask.tensor.dtype if isinstance(mask, Const) else mask.dtype)
    one = values.tensor.numel() == 1 if isinstance(values, Const) else \
        math.prod(values.shape) == 1
    if dtype != torch.bool or not one:
        raise t.error("only x[mask] = value with one boolean mask over x's "
                      "leading dimensions and one value is supported (the "
                      "mask's count of elements set depends on the data)")
    x = t.tensor(a)
    shape = mask.tensor.shape if isinstance(mask, Const) else mask.shape
    extra = (1,) * (x.rank - len(shape))
    mask = Const(mask.tensor.reshape(tuple(shape) + extra)) \
        if isinstance(mask, Const) else t.e.reshape(mask,
                                                    tuple(shape) + extra)
    v = Const(values.tensor.reshape(())) if isinstance(values, Const) \
        else t.e.reshape(values, ())
    if not accumulate:
        return _choose(t, mask, v, x)
    ty = _linalg.compute_type(x.dtype)
    return t.elementwise([x, mask, v], lambda b, s: b.binary(
        "arith.addf", "arith.addi", s[0], b.select(
            s[1] if b.types[s[1]] == "i1" else b.cast(s[1], "i1"),
            _as_compute(b, s[2], b.types[s[0]]),
            b.const(0, b.types[s[0]]))), compute=ty)


def _index_pattern(t, idx, size, shape):
    """For a constant index tensor broadcast to `shape`: (axis, positions)
    when it varies along one axis of `shape` only (None for a constant),
    the positions in [0, size) read along that axis; None when it varies
    along several."""
    full = idx.to(torch.int64).broadcast_to(shape)
    if full.numel() and (full.min() < -size or full.max() >= size):
        raise t.error("aten.index: an index out of range for a dimension "
                      "of %d" % size)
    full = torch.where(full < 0, full + size, full)
    varying = [a for a in range(len(shape))
               if shape[a] > 1 and not torch.equal(
                   full, full.narrow(a, 0, 1).expand(shape))]
    if len(varying) > 1:
        return None
    first = full.reshape(-1)[:1] if full.numel() else full.reshape(-1)
    if not varying:
        return None, [int(v) for v in first.tolist()]
    a = varying[0]
    line = full
    for b in range(len(shape)):
        if b != a:
            line = line.narrow(b, 0, 1)
    return a, [int(v) for v in line.reshape(-1).tolist()]


def _index_constant(t, node, x, indices):
    """x[i0, i1, ...] with index tensors known at trace time, as
    transformers' masks read a padding mask with aranges: each indexed
    dimension reads positions that vary along one axis of the broadcast
    index shape, so the result is selections (slices), a permutation and
    a broadcast. None where the indices vary along several axes together
    or two vary along one (a diagonal): those are read as at run time."""
    indices = list(indices) + [None] * (x.rank - len(indices))
    dims = [d for d, i in enumerate(indices) if i is not None]
    shape = tuple(torch.broadcast_shapes(
        *[tuple(indices[d].tensor.shape) for d in dims]))
    out_shape, _ = t.out_meta()
    patterns = []
    for d in dims:
        found = _index_pattern(t, indices[d].tensor, x.shape[d], shape)
        if found is None:
            return None
        patterns.append(found)
    used = [p[0] for p in patterns if p[0] is not None]
    if len(used) != len(set(used)):
        return None
    # Each indexed dimension becomes its positions along its axis (a unit
    # dimension for a constant index).
    y = x
    for d, (axis, positions) in zip(dims, patterns):
        y = _index_select(t, node, y, d, Const(torch.tensor(positions)))
    # y's dimensions: the others in place, each indexed one now sized for
    # its axis. Order them as the result: the broadcast index shape where
    # the first indexed dimension was (or first, when they are apart).
    together = dims == list(range(dims[0], dims[-1] + 1))
    rest = [d for d in range(x.rank) if d not in dims]
    before = [d for d in rest if together and d < dims[0]]
    after = [d for d in rest if d not in before]
    axis_of = {axis: d for d, (axis, _) in zip(dims, patterns)
               if axis is not None}
    constant = [d for d, (axis, _) in zip(dims, patterns) if axis is None]
    order = before + [axis_of[a] for a in sorted(axis_of)] + constant + after
    y = t.e.transpose(y, order) if order != list(range(y.rank)) else y
    # Unit dimensions for the broadcast axes no index varies along (and
    # none for the constant indices), then the broadcast.
    mid = [shape[a] if a in axis_of else 1 for a in range(len(shape))]
    y = t.e.reshape(y, tuple(y.shape[d] for d in range(len(before))) +
                    tuple(mid) + tuple(y.shape[len(before) + len(axis_of) +
                                               len(constant):]))
    return t.e.broadcast_to(y, out_shape)


@handles("embedding")
def _embedding(t, node, weight, indices, *rest):
    w = t.tensor(weight)
    if isinstance(indices, Const):
        # Constant ids (learned positions read at arange(n)): slices of the
        # table where they are runs.
        ids = indices.tensor
        picked = _index_select(t, None, w, 0, Const(ids.reshape(-1)))
        return t.e.reshape(picked, tuple(ids.shape) + w.shape[1:])
    return _lookup(t, w, t.tensor(indices))


# -- windows: convolution and pooling --------------------------------------
# linalg's named ops, as torch-mlir writes them; ein-import takes them with
# the import-coverage issue and until then refuses them with its own
# diagnostic, which names the model's line.

def _pair(v):
    return list(v) * 2 if len(v) == 1 else list(v)


@handles("convolution")
def _convolution(t, node, x, w, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    x, w = t.tensor(x), t.tensor(w)
    if x.rank not in (3, 4):
        raise t.error("convolution: only 1-D and 2-D convolutions are "
                      "supported; this one is %d-D" % (x.rank - 2))
    if transposed and groups != 1:
        raise t.error("convolution: a transposed convolution with "
                      "groups=%d; transposed ones are supported ungrouped"
                      % groups)
    shape, dtype = t.out_meta()
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    output_padding = list(output_padding)
    if x.rank == 3:
        # 1-D as 2-D over a unit row dimension (one row, a window of one
        # row): what ein.conv takes.
        x = t.e.reshape(x, x.shape[:2] + (1,) + x.shape[2:])
        w = t.e.reshape(w, w.shape[:2] + (1,) + w.shape[2:])
        stride, padding, dilation = [1] + stride, [0] + padding, \
            [1] + dilation
        output_padding = [0] + output_padding
        out = shape[:2] + (1,) + shape[2:]
    else:
        stride, padding, dilation = _pair(stride), _pair(padding), \
            _pair(dilation)
        output_padding = _pair(output_padding)
        out = tuple(shape)
    if transposed:
        x, w, low, high = _transposed_as_direct(t, x, w, stride, padding,
                                                dilation, output_padding)
        stride = [1, 1]
    else:
        low = high = padding
    padded = t.e.pad(x, [0, 0] + low, [0, 0] + high, 0.0)
    n, c = x.shape[:2]
    f = w.shape[0]
    if groups == 1:
        y = t.e.window_op("linalg.conv_2d_nchw_fchw", [padded, w], out, 0.0,
                          stride, dilation)
    elif groups == c and f == c:
        # Depthwise, as torch-mlir writes it: the filter's unit channel
        # dimension collapsed.
        filt = t.e.regroup(w, (f,) + w.shape[2:],
                           [([0, 1], [0]), ([2], [1]), ([3], [2])])
        y = t.e.window_op("linalg.depthwise_conv_2d_nchw_chw",
                          [padded, filt], out, 0.0, stride, dilation)
    else:
        # Grouped (a depthwise one with a channel multiplier too), as
        # torch-mlir writes it: the channels of the input, the filter and
        # the result split into (group, channel in the group).
        g = groups
        split = [([0], [0]), ([1], [1, 2]), ([2], [3]), ([3], [4])]
        grouped_in = t.e.regroup(
            padded, (n, g, c // g) + padded.shape[2:], split)
        grouped_w = t.e.regroup(
            w, (g, f // g) + w.shape[1:],
            [([0], [0, 1]), ([1], [2]), ([2], [3]), ([3], [4])])
        grouped_out = (n, g, f // g) + tuple(out[2:])
        y = t.e.window_op("linalg.conv_2d_ngchw_gfchw",
                          [grouped_in, grouped_w], grouped_out, 0.0, stride,
                          dilation)
        y = t.e.regroup(y, out, [(d, s) for s, d in split])
    if bias is not None:
        b = t.e.reshape(t.tensor(bias), (out[1], 1, 1))
        y = t.e.elementwise([y, b], dtype,
                            lambda bb, v: bb.binary("arith.addf", None, *v),
                            compute=_linalg.compute_type(dtype))
    return t.e.reshape(y, shape)


def _transposed_as_direct(t, x, w, stride, padding, dilation,
                          output_padding):
    """A transposed convolution as a direct one with stride 1: (x, filter,
    pad low, pad high) for it. Its input is x with stride - 1 zeros after
    each element of a row and column (each element given a unit dimension
    of its own, padded to `stride` and flattened back), padded by the
    window's reach less `padding` (plus `output_padding` after, where a
    negative pad crops); its filter is the transposed one's with input and
    output channels swapped and each window reversed (single rows and
    columns put back together in reverse order: no data-dependent
    reads)."""
    n, c, h, wd = x.shape
    if any(s > 1 for s in stride):
        spread = t.e.reshape(x, (n, c, h, 1, wd, 1))
        spread = t.e.pad(spread, [0] * 6,
                         [0, 0, 0, stride[0] - 1, 0, stride[1] - 1], 0.0)
        x = t.e.reshape(spread, (n, c, h * stride[0], wd * stride[1]))
    low, high = [], []
    for i in range(2):
        reach = dilation[i] * (w.shape[2 + i] - 1)
        low.append(reach - padding[i])
        # The zeros after the last element are not the transposed
        # convolution's: taken off its high pad.
        high.append(reach - padding[i] + output_padding[i] - (stride[i] - 1))
    x, low, high = _crop(t, x, [0, 0] + low, [0, 0] + high)
    for dim in (2, 3):
        k = w.shape[dim]
        if k > 1:
            w = t.e.concat([_slice_of(t, w, dim, i, i + 1)
                            for i in reversed(range(k))], dim)
    w = t.e.transpose(w, [1, 0, 2, 3])
    return x, w, low[2:], high[2:]


# -- interpolation: F.interpolate, nn.Upsample -------------------------------
# Each mode PyTorch has is separable: along each spatial dimension the
# output is a fixed mix of the input's elements, a matrix [out, in] found by
# running the op itself (its default overload, the same sizes and scale) on
# a probe that holds one element per channel. Nearest modes pick one element
# per output (a repeat read with a floordiv, or slices put together);
# linear and cubic ones are contractions with the matrix (a constant).

_INTERPOLATE = {}
for _dims, _modes in ((1, ("upsample_nearest1d", "_upsample_nearest_exact1d",
                           "upsample_linear1d")),
                      (2, ("upsample_nearest2d", "_upsample_nearest_exact2d",
                           "upsample_bilinear2d", "upsample_bicubic2d",
                           "_upsample_bilinear2d_aa",
                           "_upsample_bicubic2d_aa")),
                      (3, ("upsample_nearest3d", "_upsample_nearest_exact3d",
                           "upsample_trilinear3d"))):
    for _mode in _modes:
        _INTERPOLATE[_mode] = _dims


def _interpolation_matrix(t, op, x, dim, out, align, scale):
    """The [out, in] matrix that interpolates `x`'s spatial dimension `dim`
    (0-based among the spatial ones) as `op` (a default overload) does."""
    k = x.rank - 2
    n = x.shape[2 + dim]
    dtype = x.dtype if x.dtype in (torch.float32, torch.float64) \
        else torch.float32
    probe = torch.eye(n, dtype=dtype).reshape(
        (1, n) + tuple(n if i == dim else 1 for i in range(k)))
    sizes = [out if i == dim else 1 for i in range(k)]
    scales = [scale if i == dim else None for i in range(k)]
    args = [probe, sizes] + ([align] if align is not None else []) + scales
    try:
        y = op(*args)
    except RuntimeError as error:
        raise t.error("interpolating %s: %s" % (op, error))
    return y.reshape(n, out).t().contiguous()


def _interpolate(t, node, a, output_size, *rest):
    x = t.tensor(a)
    shape, dtype = t.out_meta()
    name = _schema(node.target)[len("aten::"):]
    k = _INTERPOLATE[name]
    nearest = "nearest" in name
    align = None if nearest else rest[0]
    rest = rest if nearest else rest[1:]
    if node.target._overloadname == "vec":
        factors = rest[0] if rest else None
        scales = [None] * k if factors is None else list(factors)
    else:
        scales = (list(rest) + [None] * k)[:k]
    if x.rank != k + 2:
        raise t.error("%s of a rank-%d tensor; it takes rank %d"
                      % (name, x.rank, k + 2))
    op = getattr(aten, name).default
    acc = torch.float32 if dtype in (torch.float16, torch.bfloat16) \
        else dtype
    y, repeats = x, {}
    if acc != dtype and not nearest:
        # The contractions in f32 throughout: a gemm takes operands of one
        # type, and the matrix is f32 (PyTorch's weights are).
        y = t.e.elementwise([x], acc, lambda b, s: s[0], compute=False)
    for i in reversed(range(k)):
        matrix = _interpolation_matrix(t, op, x, i, shape[2 + i], align,
                                       scales[i])
        n, m = matrix.shape[1], matrix.shape[0]
        if n == m and torch.equal(matrix, torch.eye(n, dtype=matrix.dtype)):
            continue
        if not nearest:
            y = _mix(t, y, 2 + i, matrix.to(acc), acc)
            continue
        picked = [int(j) for j in matrix.argmax(1).tolist()]
        if m % n == 0 and picked == [j // (m // n) for j in range(m)]:
            repeats[2 + i] = m // n
        else:
            y = _index_select(t, None, y, 2 + i, Const(torch.tensor(picked)))
    if repeats:
        y = _repeat_each(t, y, repeats)
    return t.e.convert(y, dtype)


def _repeat_each(t, x, repeats):
    """x with each element repeated `repeats[d]` times along each dimension
    d (nearest upsampling by whole factors): one copy that broadcasts a
    new dimension after each, then those merged (a reshape). Floordiv
    reads would need one per dimension in one map, which ein-import does
    not take."""
    shape, exprs = [], []
    for d, size in enumerate(x.shape):
        exprs.append(("d", len(shape)))
        shape.append(size)
        if d in repeats:
            shape.append(repeats[d])
    spread = t.e.view(x, exprs, tuple(shape))
    spread.name
    return t.e.reshape(spread, tuple(size * repeats.get(d, 1)
                                     for d, size in enumerate(x.shape)))


def _mix(t, x, dim, matrix, acc):
    """y[.., o, ..] = sum over i of matrix[o, i] x[.., i, ..]: one
    contraction with a constant, accumulated in `acc`."""
    rank = x.rank
    out_shape = x.shape[:dim] + (matrix.shape[0],) + x.shape[dim + 1:]
    x_exprs = _linalg.identity(rank)
    x_exprs[dim] = ("d", rank)
    m = t.materialize(Const(matrix))
    ty = _linalg.element_type(acc)
    zero = t.e.fill(0, out_shape, acc)

    def body(b, s):
        p = b.binary("arith.mulf", None, b.cast(s[0], ty), s[1])
        return b.binary("arith.addf", None, s[2], p)
    return t.e.generic([(x, x_exprs), (m, [("d", dim), ("d", rank)])],
                       out_shape, acc, body,
                       iterators=["parallel"] * rank + ["reduction"],
                       out_exprs=_linalg.identity(rank), init=zero)


for _name in _INTERPOLATE:
    HANDLERS["aten::" + _name] = _interpolate


@handles("max_pool2d_with_indices", "max_pool2d")
def _max_pool(t, node, x, kernel, stride=(), padding=(0,), dilation=(1,),
              ceil_mode=False):
    x = t.tensor(x)
    if ceil_mode:
        raise t.error("max_pool2d with ceil_mode is not supported")
    kernel = _pair(kernel)
    stride = _pair(stride) if stride else kernel
    padding = _pair(padding)
    dilation = _pair(dilation)
    # (PyTorch 1.13 records no shapes for ops with two results.)
    shape = x.shape[:2] + tuple(
        (x.shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1)
        // stride[i] + 1 for i in range(2))
    padded = t.e.pad(x, [0, 0] + padding, [0, 0] + padding, float("-inf"))
    window = t.e.empty(tuple(kernel), x.dtype)
    y = t.e.window_op("linalg.pooling_nchw_max", [padded, window], shape,
                      float("-inf"), stride, dilation)
    if _schema(node.target) == "aten::max_pool2d":
        return y
    return [y, None]  # the indices: nothing inference reads


@handles("avg_pool2d")
def _avg_pool(t, node, x, kernel, stride=(), padding=(0,), ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    x = t.tensor(x)
    padding = _pair(padding)
    if ceil_mode or (any(padding) and not count_include_pad):
        raise t.error("avg_pool2d with ceil_mode or count_include_pad=False "
                      "is not supported")
    shape, dtype = t.out_meta()
    kernel = _pair(kernel)
    stride = _pair(stride) if stride else kernel
    padded = t.e.pad(x, [0, 0] + padding, [0, 0] + padding, 0.0)
    window = t.e.empty(tuple(kernel), x.dtype)
    total = t.e.window_op("linalg.pooling_nchw_sum", [padded, window], shape,
                          0.0, stride, [1, 1])
    divisor = float(divisor_override or kernel[0] * kernel[1])
    return t.e.elementwise([total, divisor], dtype,
                           lambda bb, v: bb.binary("arith.divf", None, *v),
                           compute=_linalg.compute_type(dtype))


# -- reductions ----------------------------------------------------------

def _dims(x, dim):
    if dim is None or dim == [] or dim == ():
        return list(range(x.rank))
    if isinstance(dim, int):
        return [dim % x.rank]
    return [d % x.rank for d in dim]


def _keep(t, y, x, dims, keepdim):
    if not keepdim:
        return y
    shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    return t.e.reshape(y, shape)


@handles("sum")
def _sum(t, node, a, dim=None, keepdim=False, dtype=None):
    x = t.tensor(a)
    dims = _dims(x, dim)
    shape, out_dtype = t.out_meta()
    y = t.e.reduce(x, dims, "add", acc_dtype=_integer_acc(x.dtype))
    return t.e.convert(_keep(t, y, x, dims, keepdim), out_dtype)


def _integer_acc(dtype):
    """The accumulator of a reduction or scan of integers or booleans (a
    count of a mask's elements): f64, exact below 2**53, since block
    kernels accumulate in floats; the integer result is an elementwise
    conversion. None (the default) for floats."""
    return None if is_float(dtype) else torch.float64


@handles("mean")
def _mean(t, node, a, dim=None, keepdim=False, dtype=None):
    x = t.tensor(a)
    dims = _dims(x, dim)
    shape, out_dtype = t.out_meta()
    n = math.prod(x.shape[d] for d in dims)
    y = t.e.reduce(x, dims, "add")
    y = t.e.elementwise([y, float(n)], out_dtype,
                        lambda b, s: b.binary("arith.divf", None, *s),
                        compute=_linalg.compute_type(y.dtype))
    return _keep(t, y, x, dims, keepdim)


@handles("argmax", "argmin")
def _argmax(t, node, a, dim=None, keepdim=False):
    x = t.tensor(a)
    kind = "max" if _schema(node.target) == "aten::argmax" else "min"
    if dim is None:
        # The index into the flattened tensor.
        flat = t.e.reshape(x, (math.prod(x.shape),))
        return _keep(t, t.e.arg_reduce(flat, 0, kind)[1], x,
                     list(range(x.rank)), keepdim)
    dim %= x.rank
    return _keep(t, t.e.arg_reduce(x, dim, kind)[1], x, [dim], keepdim)


@handles("amax", "amin", "max", "min")
def _amax(t, node, a, dim=None, keepdim=False):
    name = _schema(node.target)
    if name in ("aten::max", "aten::min") and dim is not None:
        # (values, indices), both from one argmax generic.
        x = t.tensor(a)
        dim %= x.rank
        kind = "max" if name == "aten::max" else "min"
        values, indices = t.e.arg_reduce(x, dim, kind)
        return [_keep(t, values, x, [dim], keepdim),
                _keep(t, indices, x, [dim], keepdim)]
    x = t.tensor(a)
    dims = _dims(x, dim)
    shape, out_dtype = t.out_meta()
    kind = "max" if name in ("aten::amax", "aten::max") else "min"
    y = t.e.reduce(x, dims, kind, acc_dtype=_integer_acc(x.dtype))
    return t.e.convert(_keep(t, y, x, dims, keepdim), out_dtype)


@handles("topk")
def _topk(t, node, a, k, dim=-1, largest=True, sorted=True):
    """The k largest (smallest) along `dim` and their indices, largest
    first: k rounds of argmax (ein.arg_reduce and a max join-agg), each
    round reading the input with the elements taken so far hidden (-inf;
    +inf for the smallest). Sorted whatever `sorted` says (PyTorch leaves
    the order of an unsorted topk open)."""
    x = t.tensor(a)
    if not is_float(x.dtype):
        # Integers ranked as their f64 values (ein.arg_reduce takes
        # floats), exact below 2**53.
        values, indices = _topk(t, node, t.e.convert(x, torch.float64),
                                k, dim, largest, sorted)
        return [t.e.convert(values, x.dtype), indices]
    dim %= x.rank
    if not 0 <= k <= x.shape[dim]:
        raise t.error("topk of %d elements along a dimension of %d"
                      % (k, x.shape[dim]))
    kind = "max" if largest else "min"
    hidden = float("-inf") if largest else float("inf")
    unit = x.shape[:dim] + (1,) + x.shape[dim + 1:]
    position = _linalg.Indexed(x.shape, torch.int64,
                               lambda b, idx: b.from_index(idx[dim]))
    values, indices, rest = [], [], x
    for j in range(k):
        v, i = t.e.arg_reduce(rest, dim, kind)
        values.append(t.e.reshape(v, unit))
        indices.append(t.e.reshape(i, unit))
        if j + 1 < k:
            rest = t.e.elementwise(
                [rest, indices[-1], position], x.dtype,
                lambda b, s: b.select(b.cmpi("eq", s[1], s[2]),
                                      b.const(hidden, b.types[s[0]]), s[0]),
                compute=False)
    if not k:
        return [Const(torch.empty(unit[:dim] + (0,) + unit[dim + 1:],
                                  dtype=x.dtype)),
                Const(torch.empty(unit[:dim] + (0,) + unit[dim + 1:],
                                  dtype=torch.int64))]
    return [t.e.concat(values, dim), t.e.concat(indices, dim)]


def _variance(t, x, dims, correction):
    """(mean with kept dimensions, variance without them), in f32 for
    half types."""
    n = math.prod(x.shape[d] for d in dims)
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) \
        else x.dtype
    s = t.e.reduce(x, dims, "add")
    mean = t.e.elementwise([s, float(n)], acc,
                           lambda b, v: b.binary("arith.divf", None, *v),
                           compute=_linalg.element_type(acc))
    kept = _keep(t, mean, x, dims, True)
    centered = t.e.elementwise(
        [x, kept], acc, lambda b, v: b.binary("arith.subf", None, *v),
        compute=_linalg.element_type(acc))
    ss = t.e.reduce(centered, dims, "add",
                    pre=lambda b, v: b.binary("arith.mulf", None, v, v))
    var = t.e.elementwise([ss, float(max(n - correction, 0))], acc,
                          lambda b, v: b.binary("arith.divf", None, *v),
                          compute=_linalg.element_type(acc))
    return kept, var


def _correction(correction, unbiased):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@handles("var")
def _var(t, node, a, dim=None, unbiased=None, keepdim=False,
         correction=None):
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    x = t.tensor(a)
    dims = _dims(x, dim)
    shape, out_dtype = t.out_meta()
    _, var = _variance(t, x, dims, _correction(correction, unbiased))
    return _keep(t, t.e.convert(var, out_dtype), x, dims, keepdim)


@handles("var_mean")
def _var_mean(t, node, a, dim=None, unbiased=None, keepdim=False,
              correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    x = t.tensor(a)
    dims = _dims(x, dim)
    kept, var = _variance(t, x, dims, _correction(correction, unbiased))
    var = _keep(t, t.e.convert(var, x.dtype), x, dims, keepdim)
    mean = t.e.convert(kept, x.dtype)
    if not keepdim:
        mean = t.e.reshape(mean, tuple(s for i, s in enumerate(x.shape)
                                       if i not in dims))
    return (var, mean)


@handles("_softmax", "softmax")
def _softmax(t, node, a, dim, half_to_float=False):
    x = t.tensor(a)
    shape, dtype = t.out_meta()
    # In the input's type (the importer computes half bodies in f32 and
    # rounds their results), so attention around it stays recognisable;
    # half_to_float asks for an f32 result.
    return t.e.convert(t.e.softmax(x, dim), dtype)


@handles("_safe_softmax")
def _safe_softmax(t, node, a, dim, dtype=None):
    """PyTorch 2's softmax inside scaled_dot_product_attention's math form:
    a row whose entries are all -inf (every key masked) gives 0 rather
    than NaN."""
    x = t.tensor(a)
    shape, out_dtype = t.out_meta()
    dim %= x.rank
    p = t.e.convert(t.e.softmax(x, dim), out_dtype)
    m = _keep(t, t.e.reduce(x, [dim], "max"), x, [dim], True)
    ty = _linalg.compute_type(out_dtype)

    def body(b, s):
        hidden = b.cmpf("oeq", s[1], b.const(float("-inf"), b.types[s[1]]))
        return b.select(hidden, b.const(0.0, ty), _as_compute(b, s[0], ty))
    return t.e.elementwise([p, m], out_dtype, body, compute=False,
                           out_shape=shape)


@handles("_log_softmax", "log_softmax")
def _log_softmax(t, node, a, dim, half_to_float=False):
    x = t.tensor(a)
    shape, dtype = t.out_meta()
    dim %= x.rank
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) \
        else x.dtype
    ty = _linalg.element_type(acc)
    m = _keep(t, t.e.reduce(x, [dim], "max"), x, [dim], True)
    shifted = t.e.elementwise([x, m], acc,
                              lambda b, s: b.binary("arith.subf", None, *s),
                              compute=ty)
    total = t.e.reduce(shifted, [dim], "add",
                       pre=lambda b, v: b.unary("math.exp", v))
    lse = _keep(t, total, x, [dim], True)
    return t.e.elementwise(
        [shifted, lse], dtype,
        lambda b, s: b.binary("arith.subf", None, s[0],
                              b.unary("math.log", s[1])), compute=ty)


def _used(node, result):
    """Whether anything reads result `result` of a node with several."""
    return any(u.target is operator.getitem and u.args[1] == result
               for u in node.users)


@handles("nll_loss_forward", "nll_loss2d_forward")
def _nll_loss(t, node, a, target, weight, reduction, ignore_index):
    """-x[.., target, ..] (times the class weight), the sum or the mean
    weighted by the class weights, and the total weight: the picked
    element a one-hot sum over the classes (the target read as data),
    targets equal to ignore_index counting 0."""
    x, target = t.tensor(a), t.tensor(target)
    if not is_float(x.dtype):
        raise t.error("nll_loss of a %s tensor" % x.dtype)
    r = target.rank  # its loops: the target's dimensions, then classes
    x_exprs = ([("d", 0), ("d", r)] + [("d", i) for i in range(1, r)]
               if x.rank > 1 else [("d", r)])
    operands = [(target, _linalg.identity(r)), (x, x_exprs)]
    if weight is not None:
        operands.append((t.tensor(weight), [("d", r)]))
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) \
        else x.dtype
    ty = _linalg.element_type(acc)

    def picked(which):
        """Per target, the (weighted) element picked, or its weight."""
        def body(b, s):
            other = b.const(ignore_index, b.types[s[0]])
            ignored = b.cmpi("ne", s[0], other) if b.types[s[0]] in (
                "i64", "i32") else b.cmpf("une", s[0], other)
            hit = b.op("arith.andi %s, %s" % (_is_position(b, s[0], r),
                                               ignored), "i1")
            w = b.cast(s[2], ty) if weight is not None else b.const(1.0, ty)
            v = w if which == "weight" else b.binary(
                "arith.mulf", None, b.cast(s[1], ty), w)
            v = b.select(hit, v, b.const(0.0, ty))
            return b.binary("arith.addf", None, s[-1], v)
        zero = t.e.fill(0, target.shape, acc)
        return t.e.generic(operands, target.shape, acc, body,
                           iterators=["parallel"] * r + ["reduction"],
                           out_exprs=_linalg.identity(r), init=zero)
    mean = reduction == 1
    total = None
    if mean or _used(node, 1):
        total = t.e.reduce(picked("weight"), list(range(r)), "add")
    loss = picked("element")
    if reduction == 0:
        out = t.e.elementwise([loss], x.dtype,
                              lambda b, s: b.unary("arith.negf", s[0]),
                              compute=ty)
    else:
        summed = t.e.reduce(loss, list(range(r)), "add")
        if mean:
            out = t.e.elementwise(
                [summed, total], x.dtype, lambda b, s: b.unary(
                    "arith.negf", b.binary("arith.divf", None, *s)),
                compute=ty)
        else:
            out = t.e.elementwise([summed], x.dtype,
                                  lambda b, s: b.unary("arith.negf", s[0]),
                                  compute=ty)
    return [out, t.e.convert(total, x.dtype) if total is not None else None]


@handles("native_layer_norm")
def _layer_norm(t, node, a, normalized_shape, weight, bias, eps):
    x = t.tensor(a)
    k = len(normalized_shape)
    dims = list(range(x.rank - k, x.rank))
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) \
        else x.dtype
    ty = _linalg.element_type(acc)
    mean, var = _variance(t, x, dims, 0)
    rstd = _keep(t, t.e.elementwise(
        [var, float(eps)], acc,
        lambda b, s: b.unary("math.rsqrt", b.binary("arith.addf", None, *s)),
        compute=ty), x, dims, True)
    operands = [x, mean, rstd]
    if weight is not None:
        operands.append(t.tensor(weight))
    if bias is not None:
        operands.append(t.tensor(bias))

    def body(b, s):
        y = b.binary("arith.mulf", None,
                     b.binary("arith.subf", None, s[0], s[1]), s[2])
        i = 3
        if weight is not None:
            y = b.binary("arith.mulf", None, y, s[i])
            i += 1
        if bias is not None:
            y = b.binary("arith.addf", None, y, s[i])
        return y
    out = t.e.elementwise(operands, x.dtype, body, compute=ty,
                          out_shape=x.shape)
    return (out, t.e.convert(mean, acc), t.e.convert(rstd, acc))


# -- the scaled dot-product attention ops of PyTorch 2 -------------------

def _is_causal_mask(mask):
    """Whether an attention mask known at trace time hides exactly the keys
    after the query: a boolean one true on and below the diagonal, or an
    additive one 0 there and at or below -1000 above it (transformers
    writes its causal masks out under torch.export, with f16's finfo.min,
    -65504, which bf16 rounds to -65536). Added to the scores, such a value
    sends exp to 0 as -inf does (ein-fuse-composites' bound, unless a row's
    visible scores are all below -896), so the attention is the causal one
    ein fuses."""
    if not isinstance(mask, Const) or mask.tensor.dim() < 2 or \
            mask.tensor.shape[-1] != mask.tensor.shape[-2]:
        return False
    found = _causal_mask(mask.tensor)
    if found is None or found[0] != 0:
        return False
    _, low, high = found
    if mask.tensor.dtype == torch.bool:
        return bool(low) and not bool(high)
    return low == 0 and high <= -1000


def _attention(t, q, k, v, causal, scale, enable_gqa=False, mask=None):
    """softmax(scale q k^T (+ causal mask)) v on [.., heads, tokens, dim]
    tensors, written as the pattern ein-fuse-composites makes one
    ein.attention of (GQA: key and value heads broadcast to the query's)."""
    q, k, v = t.tensor(q), t.tensor(k), t.tensor(v)
    if q.rank != 4:
        raise t.error("attention over rank-%d tensors; [batch, heads, "
                      "tokens, dim] is supported" % q.rank)
    if mask is not None and _is_causal_mask(mask):
        causal, mask = True, None
    b, h, s, d = q.shape
    kv = k.shape[1]
    if kv != h:
        group = h // kv
        k = _index_select(t, None, k, 1, Const(
            torch.arange(h) // group))
        v = _index_select(t, None, v, 1, Const(
            torch.arange(h) // group))
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    kt = t.e.transpose(k, [0, 1, 3, 2])
    scores = t.e.matmul(t.e.reshape(q, (b * h, s, d)),
                        t.e.reshape(kt, (b * h, d, k.shape[2])))
    scores = t.e.reshape(scores, (b, h, s, k.shape[2]))
    operands = [scores, float(scale)]
    if causal:
        # Keys after the query hidden: the select ein-fuse-composites reads.
        operands.append(_linalg.Indexed(
            (s, k.shape[2]), torch.bool,
            lambda bb, idx: bb.cmpi("sgt", idx[-1], idx[-2])))
    if mask is not None:
        operands.append(t.operand(mask))
    acc = _linalg.compute_type(scores.dtype)

    def body(bb, x):
        y = bb.binary("arith.mulf", None, x[0], x[1])
        extras = x[2:]
        if causal:
            y = bb.select(extras[0], bb.const(float("-inf"), acc), y)
            extras = extras[1:]
        for extra in extras:
            if bb.types[extra] == "i1":  # a boolean mask keeps what is true
                y = bb.select(extra, y, bb.const(float("-inf"), acc))
            else:
                y = bb.binary("arith.addf", None, y, extra)
        return y
    # Scores, probabilities and values in the inputs' type: the chain
    # ein-fuse-composites makes one ein.attention of (whose kernels keep
    # the softmax in f32, as PyTorch's do).
    masked = t.e.elementwise(operands, scores.dtype, body, compute=acc)
    p = t.e.softmax(masked, 3)
    o = t.e.matmul(t.e.reshape(p, (b * h, s, k.shape[2])),
                   t.e.reshape(v, (b * h, v.shape[2], v.shape[3])))
    return t.e.reshape(o, (b, h, s, v.shape[3]))


@handles("scaled_dot_product_attention")
def _sdpa(t, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    return _attention(t, q, k, v, is_causal, scale, enable_gqa, attn_mask)


# The tracer's own op for F.scaled_dot_product_attention, kept whole
# (_trace._attention_op): (q, k, v, attn_mask, dropout_p, is_causal, scale,
# enable_gqa).
HANDLERS["einsummable::attention"] = _sdpa


def _sdpa_variant(t, node, q, k, v, *args, **kwargs):
    """_scaled_dot_product_{flash,efficient,cudnn,...}_attention: the output
    first, then statistics nobody reads in inference."""
    causal = kwargs.get("is_causal", False)
    scale = kwargs.get("scale")
    mask = kwargs.get("attn_bias", kwargs.get("attn_mask"))
    name = _schema(node.target)
    if name.endswith("_flash_attention_for_cpu"):
        # (q, k, v, dropout_p, is_causal, *, attn_mask, scale)
        causal = args[1] if len(args) > 1 else causal
    elif name.endswith("_flash_attention"):
        # (q, k, v, dropout_p, is_causal, return_debug_mask, *, scale)
        causal = args[1] if len(args) > 1 else causal
    elif name.endswith("_efficient_attention"):
        # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, ..)
        mask = args[0] if args else mask
        causal = args[3] if len(args) > 3 else causal
    elif name.endswith("_cudnn_attention"):
        # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, ..)
        mask = args[0] if args else mask
        causal = args[3] if len(args) > 3 else causal
    out = _attention(t, q, k, v, causal, scale, mask=mask)
    return [out] + [None] * 8


for _name in ("_scaled_dot_product_flash_attention_for_cpu",
              "_scaled_dot_product_flash_attention",
              "_scaled_dot_product_efficient_attention",
              "_scaled_dot_product_cudnn_attention"):
    HANDLERS["aten::" + _name] = _sdpa_variant


# -- constants that reach handlers with run-time operands ----------------
# `x.new_zeros(shape)`, `zeros_like(x)`: the values do not depend on x, so
# they are constants known at trace time (a fill where the program reads
# them, nothing where it does not: batch norm's decomposition makes empty
# statistics nobody reads).

@handles("ones_like", "zeros_like", "full_like", "empty_like", "new_zeros",
         "new_ones", "new_full", "new_empty", "new_empty_strided")
def _like(t, node, a, *args, **kwargs):
    shape, dtype = t.out_meta()
    name = _schema(node.target)
    if name == "aten::full_like":
        value = args[0] if args else kwargs.get("fill_value")
    elif name == "aten::new_full":
        value = args[1] if len(args) > 1 else kwargs.get("fill_value")
    else:
        value = 1 if name in ("aten::ones_like", "aten::new_ones") else 0
    if isinstance(value, Const):
        value = value.tensor.item()
    if not isinstance(value, (bool, int, float)):
        raise t.error("%s with a fill value computed at run time is not "
                      "supported" % node.target)
    return Const(torch.tensor(value, dtype=dtype).expand(shape))


# -- padding ---------------------------------------------------------------

def _pad_pairs(t, x, pad):
    """PyTorch's pad list (last dimension first, (before, after) each) as
    per-dimension (low, high)."""
    pad = list(pad)
    if len(pad) % 2 or len(pad) // 2 > x.rank:
        raise t.error("a pad of %d values for a rank-%d tensor"
                      % (len(pad), x.rank))
    low, high = [0] * x.rank, [0] * x.rank
    for i in range(len(pad) // 2):
        low[x.rank - 1 - i] = int(pad[2 * i])
        high[x.rank - 1 - i] = int(pad[2 * i + 1])
    return low, high


def _crop(t, x, low, high):
    """x with the negative pads (a crop) taken off; the pads left."""
    if all(v >= 0 for v in low + high):
        return x, low, high
    offsets = [max(0, -lo) for lo in low]
    sizes = [d - max(0, -lo) - max(0, -hi)
             for d, lo, hi in zip(x.shape, low, high)]
    x = t.e.extract_slice(x, offsets, sizes)
    return x, [max(0, v) for v in low], [max(0, v) for v in high]


def _constant_pad(t, x, pad, value):
    x = t.tensor(x)
    low, high = _pad_pairs(t, x, pad)
    x, low, high = _crop(t, x, low, high)
    if isinstance(value, Const):
        value = value.tensor.item()
    return t.e.pad(x, low, high, 0.0 if value is None else value)


def _edge_pad(t, x, pad, mode):
    """reflect, replicate and circular padding as slices of `x` put
    together along each padded dimension (the last first, so corners come
    out as PyTorch's): no data-dependent reads, only ein.slice and
    ein.concat."""
    x = t.tensor(x)
    low, high = _pad_pairs(t, x, pad)
    for dim in reversed(range(x.rank)):
        lo, hi = low[dim], high[dim]
        if not lo and not hi:
            continue
        n = x.shape[dim]

        def piece(start, size=1):
            return _slice_of(t, x, dim, start, start + size)

        if mode == "reflect":
            if lo >= n or hi >= n:
                raise t.error("reflect padding of %d and %d on a dimension "
                              "of %d: PyTorch needs each below it"
                              % (lo, hi, n))
            before = [piece(i) for i in range(lo, 0, -1)]
            after = [piece(n - 2 - i) for i in range(hi)]
        elif mode == "replicate":
            def edge(i, count):
                # The edge slice read `count` times (a broadcast).
                if not count:
                    return []
                size = list(x.shape)
                size[dim] = count
                return [t.e.broadcast_to(piece(i), tuple(size))]
            before, after = edge(0, lo), edge(n - 1, hi)
        else:  # circular
            if lo > n or hi > n:
                raise t.error("circular padding of %d and %d on a dimension "
                              "of %d: PyTorch needs each at most it"
                              % (lo, hi, n))
            before = [piece(n - lo, lo)] if lo else []
            after = [piece(0, hi)] if hi else []
        x = t.e.concat(before + [x] + after, dim)
    return x


@handles("constant_pad_nd")
def _constant_pad_nd(t, node, x, pad, value=0):
    return _constant_pad(t, x, pad, value)


for _name in ("reflection_pad1d", "reflection_pad2d", "reflection_pad3d"):
    HANDLERS["aten::" + _name] = (
        lambda t, node, x, pad: _edge_pad(t, x, pad, "reflect"))
for _name in ("replication_pad1d", "replication_pad2d", "replication_pad3d"):
    HANDLERS["aten::" + _name] = (
        lambda t, node, x, pad: _edge_pad(t, x, pad, "replicate"))


@handles("_pad_circular")
def _pad_circular(t, node, x, pad):
    return _edge_pad(t, x, pad, "circular")


@handles("pad")
def _pad(t, node, x, pad, mode="constant", value=None):
    if mode == "constant":
        return _constant_pad(t, x, pad, value)
    if mode in ("reflect", "replicate", "circular"):
        return _edge_pad(t, x, pad, mode)
    raise t.error("padding in mode '%s' is not supported (constant, "
                  "reflect, replicate and circular are)" % mode)


# -- scans -----------------------------------------------------------------

@handles("cumsum")
def _cumsum(t, node, a, dim, dtype=None):
    """y[.., i, ..] = sum over k <= i of x[.., k, ..]: one contraction-like
    generic with a reduction loop k that reads x at k and keeps the terms
    with k <= i (a mask from linalg.index), an ordinary sum join-agg."""
    x = t.tensor(a)
    shape, out_dtype = t.out_meta()
    dim %= max(x.rank, 1)
    if x.rank == 0:
        return t.e.convert(x, out_dtype)
    rank = x.rank
    in_exprs = _linalg.identity(rank)
    in_exprs[dim] = ("d", rank)  # read at k, the reduction loop
    acc_dtype = torch.float32 if out_dtype in (torch.float16,
                                               torch.bfloat16) else (
        _integer_acc(out_dtype) or out_dtype)
    acc = _linalg.element_type(acc_dtype)
    zero = t.e.fill(0, shape, acc_dtype)

    def body(b, s):
        v = b.cast(s[0], acc)
        keep = b.cmpi("sle", b.index(rank), b.index(dim))
        v = b.select(keep, v, b.const(0, acc))
        return b.binary("arith.addf", "arith.addi", s[1], v)
    y = t.e.generic([(x, in_exprs)], shape, acc_dtype, body,
                    iterators=["parallel"] * rank + ["reduction"],
                    out_exprs=_linalg.identity(rank), init=zero)
    return t.e.convert(y, out_dtype)


@handles("logsumexp")
def _logsumexp(t, node, a, dim, keepdim=False):
    """log(sum(exp(x - m))) + m with m the maximum, taken as 0 where it is
    infinite (PyTorch's own formula: a row of -inf gives -inf, not NaN),
    the maximum's fix computed in each op that reads it (no tensor of
    booleans)."""
    x = t.tensor(a)
    shape, dtype = t.out_meta()
    dims = _dims(x, dim)
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) \
        else x.dtype
    ty = _linalg.element_type(acc)

    def finite(b, m):
        inf = b.const(float("inf"), ty)
        return b.select(b.cmpf("oeq", b.unary("math.absf", m), inf),
                        b.const(0.0, ty), m)
    m = t.e.reduce(x, dims, "max", acc_dtype=acc)
    kept = _keep(t, m, x, dims, True)
    shifted = t.e.elementwise(
        [x, kept], acc, lambda b, s: b.unary("math.exp", b.binary(
            "arith.subf", None, s[0], finite(b, s[1]))), compute=ty)
    total = t.e.reduce(shifted, dims, "add")
    y = t.e.elementwise(
        [total, m], dtype, lambda b, s: b.binary(
            "arith.addf", None, b.unary("math.log", s[0]), finite(b, s[1])),
        compute=ty)
    return _keep(t, y, x, dims, keepdim)


# -- scatters into slices: the pieces put together ---------------------------

@handles("slice_scatter")
def _slice_scatter(t, node, a, src, dim=0, start=None, end=None, step=1):
    x, src = t.tensor(a), t.tensor(src)
    dim %= x.rank
    n = x.shape[dim]
    start = 0 if start is None else start
    start = max(0, min(n, start + n if start < 0 else start))
    if step != 1:
        raise t.error("slice_scatter with step %d; only unit steps are "
                      "supported" % step)
    stop = start + src.shape[dim]
    pieces = [_slice_of(t, x, dim, 0, start)] if start else []
    pieces.append(t.e.convert(src, x.dtype))
    if stop < n:
        pieces.append(_slice_of(t, x, dim, stop, n))
    return t.e.concat(pieces, dim)


@handles("select_scatter")
def _select_scatter(t, node, a, src, dim, index):
    x, src = t.tensor(a), t.tensor(src)
    dim %= x.rank
    index = index + x.shape[dim] if index < 0 else index
    row = t.e.reshape(src, src.shape[:dim] + (1,) + src.shape[dim:])
    return _slice_scatter(t, node, x, row, dim, index, index + 1)


# -- scatters at run-time indices: one-hot sums -------------------------------

def _scattered(t, index, dim, shape, src, dtype):
    """sum over j of (index[.., j, ..] == i ? src[.., j, ..] : 0) at each
    [.., i, ..] of `shape` (src None: 1 per hit, the count of writes), 0
    where the index reaches no element (PyTorch's index may be smaller than
    the tensor in the other dimensions)."""
    ids = t.tensor(index)
    rank = len(shape)
    covered = ids.shape[:dim] + (shape[dim],) + ids.shape[dim + 1:]
    exprs = _linalg.identity(rank)
    exprs[dim] = ("d", rank)
    operands = [(ids, exprs)]
    if src is not None:
        if src.shape != ids.shape:
            src = t.e.extract_slice(src, [0] * rank, ids.shape)
        operands.append((src, exprs))
    ty = _linalg.element_type(dtype)
    zero = t.e.fill(0, covered, dtype)

    def body(b, s):
        one = b.cast(s[1], ty) if src is not None else b.const(1.0, ty)
        v = b.select(_is_position(b, s[0], dim), one, b.const(0.0, ty))
        return b.binary("arith.addf", None, s[-1], v)
    y = t.e.generic(operands, covered, dtype, body,
                    iterators=["parallel"] * rank + ["reduction"],
                    out_exprs=_linalg.identity(rank), init=zero)
    if covered != tuple(shape):
        y = t.e.pad(y, [0] * rank, [s - c for s, c in zip(shape, covered)],
                    0.0)
    return y


def _zeros(x):
    return isinstance(x, Const) and x.tensor.numel() > 0 and bool(
        (x.tensor == 0).all())


@handles("scatter", "scatter_add")
def _scatter(t, node, a, dim, index, src, reduce=None):
    """scatter_add: self plus the sum of src's elements sent to each place;
    scatter: src's element sent there (the sum, with the same index
    repeated: PyTorch leaves that case open), or a value (scatter.value),
    where anything is sent, self elsewhere. One-hot sums over the index's
    dimension `dim`."""
    shape, dtype = t.out_meta()
    if not is_float(dtype):
        raise t.error("scatter into a %s tensor: ein's join-aggs write "
                      "floats" % dtype)
    if reduce is not None:
        raise t.error("scatter with reduce='%s' is not supported" % reduce)
    dim %= len(shape)
    value = None
    if isinstance(src, (Value, Const)):
        src = t.tensor(src)
    else:
        src, value = None, float(src)  # scatter.value
    if _schema(node.target) == "aten::scatter_add":
        sent = _scattered(t, index, dim, shape, src, dtype)
        return t.elementwise([a, sent], _arith("arith.addf", None))
    if src is not None:
        sent = _scattered(t, index, dim, shape, src, dtype)
        if _zeros(a):
            return t.e.convert(sent, dtype)
    count = _scattered(t, index, dim, shape, None, dtype)

    def body(b, s):
        hit = b.cmpf("ogt", s[0], b.const(0.0, b.types[s[0]]))
        return b.select(hit, s[1], s[2])
    return t.elementwise([count, sent if src is not None else value, a],
                         body, compute=_linalg.compute_type(dtype))


# -- adaptive pooling --------------------------------------------------------

def _adaptive_avg(t, node, a, output_size):
    """Adaptive average pooling to an output size that divides the input:
    windows of in/out elements, not overlapping, so each spatial dimension
    splits into (out, window) (a reshape) and the windows are averaged (a
    sum, divided)."""
    x = t.tensor(a)
    shape, dtype = t.out_meta()
    k = len(output_size)
    spatial = x.shape[x.rank - k:]
    out = [s if o is None else int(o) for o, s in zip(output_size, spatial)]
    if any(o <= 0 or s % o for o, s in zip(out, spatial)):
        raise t.error("adaptive average pooling from %s to %s: only output "
                      "sizes that divide the input's are supported (the "
                      "windows are then equal and do not overlap)"
                      % (list(spatial), out))
    lead = x.shape[:x.rank - k]
    split = list(lead)
    for o, s in zip(out, spatial):
        split += [o, s // o]
    y = t.e.reshape(x, tuple(split))
    dims = [len(lead) + 2 * i + 1 for i in range(k)]
    count = math.prod(s // o for o, s in zip(out, spatial))
    total = t.e.reduce(y, dims, "add")
    return t.e.elementwise([total, float(count)], dtype,
                           lambda b, v: b.binary("arith.divf", None, *v),
                           compute=_linalg.compute_type(dtype),
                           out_shape=shape)


for _name in ("_adaptive_avg_pool2d", "adaptive_avg_pool2d",
              "_adaptive_avg_pool3d", "adaptive_avg_pool3d",
              "adaptive_avg_pool1d"):
    HANDLERS["aten::" + _name] = _adaptive_avg
