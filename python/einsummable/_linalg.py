"""An ATen graph (torch.fx, from make_fx) as linalg on tensors.

The form torch-mlir emits: named ops (`linalg.matmul`, `linalg.batch_matmul`,
`linalg.transpose`, `linalg.softmax`, `linalg.fill`) and `linalg.generic`s
whose maps are projected permutations (a broadcast unit dimension read at 0),
with `tensor.expand_shape`/`collapse_shape`, `extract_slice` and `concat` for
views. The C++ importer (`ein-import`, then `ein-fuse-composites`) turns it
into the ein dialect, so every front end reaches the planner by one path.

Elementwise bodies of f16/bf16 tensors compute in f32 and round once per op,
as PyTorch's kernels do; reductions of them accumulate in f32.
"""

import math

import torch

from ._errors import FrontendError

aten = torch.ops.aten

_ELEMENT = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.bool: "i1",
}

# -inf, +inf and NaN as MLIR's hexadecimal float literals, per type.
_SPECIAL = {
    "f32": {"-inf": "0xFF800000", "inf": "0x7F800000", "nan": "0x7FC00000"},
    "f64": {"-inf": "0xFFF0000000000000", "inf": "0x7FF0000000000000",
            "nan": "0x7FF8000000000000"},
    "f16": {"-inf": "0xFC00", "inf": "0x7C00", "nan": "0x7E00"},
    "bf16": {"-inf": "0xFF80", "inf": "0x7F80", "nan": "0x7FC0"},
}


def element_type(dtype, where=None):
    if dtype not in _ELEMENT:
        raise FrontendError("tensors of %s have no linalg form here" % dtype,
                            where)
    return _ELEMENT[dtype]


def is_float(dtype):
    return dtype.is_floating_point


def compute_type(dtype):
    """The type an elementwise body computes in for tensors of `dtype`."""
    if dtype in (torch.float16, torch.bfloat16):
        return "f32"
    return element_type(dtype)


def float_literal(value, ty):
    value = float(value)
    if math.isnan(value):
        return _SPECIAL[ty]["nan"]
    if math.isinf(value):
        return _SPECIAL[ty]["inf" if value > 0 else "-inf"]
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = mantissa + ".0e" + exponent
    elif "." not in text and "e" not in text:
        text += ".0"
    return text


def tensor_type(shape, dtype):
    ty = element_type(dtype)
    if not shape:
        return "tensor<%s>" % ty
    return "tensor<%sx%s>" % ("x".join(str(int(d)) for d in shape), ty)


class Value:
    """A tensor value of the emitted function. A plain Value is an SSA
    name. Two lazy kinds stand for views PyTorch takes for free, so the ops
    that read them read the underlying tensor through their maps instead of
    a copy (that is how a transposed weight reaches a contraction, a
    broadcast reaches an add, GQA's repeated heads reach attention):

    - a View reads `base` (a plain Value) with, per base dimension, an
      expression of the view's dimensions: ("d", i) the view's dimension i,
      ("c", 0) the constant 0 (a broadcast unit dimension), ("fd", i, c) the
      view's dimension i floordiv c (a repeat_interleave);
    - a Merged value is `base` with groups of consecutive dimensions
      collapsed (a reshape flattening batch dimensions for a matmul).

    Reading a lazy value's `name` materializes it (a copy, or a
    collapse_shape)."""

    def __init__(self, name, shape, dtype, emitter=None, base=None,
                 exprs=None, groups=None):
        self._name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.emitter = emitter
        self.base = base
        self.exprs = exprs
        self.groups = groups

    @property
    def lazy(self):
        return self._name is None

    @property
    def is_view(self):
        return self._name is None and self.exprs is not None

    @property
    def is_merged(self):
        return self._name is None and self.groups is not None

    @property
    def name(self):
        if self._name is None:
            self._name = self.emitter.materialize(self)
        return self._name

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)


class Indexed:
    """An elementwise operand computed in the body from the loop indices
    (a causal mask) instead of read from a tensor: `fn(body, indices)` gets
    one index per dimension of `shape` and returns the scalar."""

    def __init__(self, shape, dtype, fn):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.fn = fn


class Body:
    """The scalar region of one generic: arith/math ops on SSA names, each
    value tagged with its MLIR type."""

    def __init__(self, emitter):
        self.e = emitter
        self.lines = []
        self.types = {}

    def op(self, text, ty):
        name = self.e.fresh("s")
        self.lines.append("%s = %s : %s" % (name, text, ty))
        self.types[name] = ty
        return name

    def const(self, value, ty):
        if ty in ("f32", "f64", "f16", "bf16"):
            literal = float_literal(value, ty)
        elif ty == "i1":
            # `true`/`false` are typed already (i1): no `: i1` after them.
            name = self.e.fresh("s")
            self.lines.append("%s = arith.constant %s"
                              % (name, "true" if value else "false"))
            self.types[name] = ty
            return name
        else:
            literal = str(int(value))
        return self.op("arith.constant %s" % literal, ty)

    def cast(self, x, ty):
        """`x` converted to `ty` (float widths, float/int, bool)."""
        src = self.types[x]
        if src == ty:
            return x
        floats = ("f16", "bf16", "f32", "f64")
        width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1,
                 "i32": 32, "i64": 64}
        if src in floats and ty in floats:
            if src in ("f16", "bf16") and ty in ("f16", "bf16"):
                x = self.cast(x, "f32")
                src = "f32"
            opname = "arith.extf" if width[ty] > width[src] else "arith.truncf"
            return self._conv(opname, x, src, ty)
        if src == "i1" and ty in floats:
            return self._conv("arith.uitofp", x, src, ty)
        if src in ("i32", "i64") and ty in floats:
            return self._conv("arith.sitofp", x, src, ty)
        if src in floats and ty in ("i32", "i64"):
            return self._conv("arith.fptosi", x, src, ty)
        if src in floats and ty == "i1":
            zero = self.const(0.0, src)
            return self.cmpf("une", x, zero)
        if src in ("i32", "i64") and ty == "i1":
            zero = self.const(0, src)
            return self.cmpi("ne", x, zero)
        if src == "i1" and ty in ("i32", "i64"):
            # A select (program.json has no extui).
            return self.select(x, self.const(1, ty), self.const(0, ty))
        if src in ("i32", "i64") and ty in ("i32", "i64"):
            # Through f64, exact for 32-bit integers (program.json has no
            # extsi or trunci).
            return self._conv("arith.fptosi",
                              self._conv("arith.sitofp", x, src, "f64"),
                              "f64", ty)
        raise FrontendError("no conversion from %s to %s" % (src, ty))

    def _conv(self, opname, x, src, ty):
        name = self.e.fresh("s")
        self.lines.append("%s = %s %s : %s to %s" % (name, opname, x, src, ty))
        self.types[name] = ty
        return name

    def binary(self, fop, iop, a, b):
        ty = self.types[a]
        if ty in ("f16", "bf16", "f32", "f64"):
            return self.op("%s %s, %s" % (fop, a, b), ty)
        if iop is None:
            raise FrontendError("%s has no integer form" % fop)
        return self.op("%s %s, %s" % (iop, a, b), ty)

    def unary(self, opname, a):
        return self.op("%s %s" % (opname, a), self.types[a])

    def _compare(self, opname, predicate, a, b):
        name = self.e.fresh("s")
        self.lines.append("%s = %s %s, %s, %s : %s"
                          % (name, opname, predicate, a, b, self.types[a]))
        self.types[name] = "i1"
        return name

    def cmpf(self, predicate, a, b):
        return self._compare("arith.cmpf", predicate, a, b)

    def cmpi(self, predicate, a, b):
        return self._compare("arith.cmpi", predicate, a, b)

    def select(self, c, a, b):
        name = self.e.fresh("s")
        self.lines.append("%s = arith.select %s, %s, %s : %s"
                          % (name, c, a, b, self.types[a]))
        self.types[name] = self.types[a]
        return name

    def index(self, dim):
        name = self.e.fresh("s")
        self.lines.append("%s = linalg.index %d : index" % (name, dim))
        self.types[name] = "index"
        return name

    def to_index(self, x):
        """An integer scalar as an index (a gather's row)."""
        return self._conv("arith.index_cast", x, self.types[x], "index")

    def from_index(self, x, ty="i64"):
        """An index (a loop's position) as an integer of type `ty`."""
        return self._conv("arith.index_cast", x, "index", ty)


def _affine(rank, exprs):
    dims = ", ".join("d%d" % i for i in range(rank))
    return "affine_map<(%s) -> (%s)>" % (dims, ", ".join(exprs))


def fmt(expr):
    """An expression tuple as affine syntax."""
    if expr[0] == "d":
        return "d%d" % expr[1]
    if expr[0] == "c":
        return str(expr[1])
    return "d%d floordiv %d" % (expr[1], expr[2])


def compose(inner, outer):
    """`inner` (an expression of a view's dimensions) with each view
    dimension replaced by `outer[i]` (expressions of a consumer's loops);
    None where the result leaves the forms ein imports."""
    if inner[0] == "c":
        return inner
    o = outer[inner[1]]
    if inner[0] == "d":
        return o
    if o[0] == "c":
        return ("c", 0)
    if o[0] == "d":
        return ("fd", o[1], inner[2])
    return None


def identity(rank):
    return [("d", i) for i in range(rank)]


def broadcast_exprs(shape, out_shape):
    """How a tensor of `shape` broadcast (right-aligned, as PyTorch
    broadcasts) to `out_shape` is read by loops over `out_shape`."""
    offset = len(out_shape) - len(shape)
    return [("c", 0) if size == 1 and out_shape[offset + i] != 1
            else ("d", offset + i) for i, size in enumerate(shape)]


def broadcast_shapes(*shapes):
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError as error:
        raise FrontendError("shapes %s do not broadcast: %s"
                            % (list(shapes), error))


class Emitter:
    """Builds the text of one function: statements appended in order."""

    def __init__(self):
        self.lines = []
        self.counter = 0
        self.loc = None

    def fresh(self, prefix="v"):
        self.counter += 1
        return "%%%s%d" % (prefix, self.counter)

    def emit(self, text):
        if self.loc is not None:
            text += " " + self.loc
        self.lines.append(text)

    # -- building blocks -------------------------------------------------

    def empty(self, shape, dtype):
        name = self.fresh()
        self.emit("%s = tensor.empty() : %s" % (name, tensor_type(shape, dtype)))
        return Value(name, shape, dtype)

    def fill(self, value, shape, dtype):
        ty = element_type(dtype)
        empty = self.empty(shape, dtype)
        cst = self.fresh("c")
        if ty == "i1":
            literal = "true" if value else "false"
        elif is_float(dtype):
            literal = float_literal(value, ty)
        else:
            literal = str(int(value))
        self.emit("%s = arith.constant %s%s" % (
            cst, literal, "" if ty == "i1" else " : " + ty))
        name = self.fresh()
        self.emit("%s = linalg.fill ins(%s : %s) outs(%s : %s) -> %s"
                  % (name, cst, ty, empty.name, empty.type, empty.type))
        return Value(name, shape, dtype)

    def resolve(self, x, exprs):
        """(a plain Value, its read expressions) for reading `x` with
        `exprs` (one expression tuple per dimension of x, in the consumer's
        loops): a View is read through its base."""
        if x.is_view:
            composed = [compose(e, exprs) for e in x.exprs]
            if all(c is not None for c in composed):
                return x.base, composed
        x.name  # materialize a Merged value or a View that does not compose
        return x, list(exprs)

    def generic(self, operands, out_shape, out_dtype, body_fn,
                iterators=None, out_exprs=None, init=None):
        """A linalg.generic. `operands` are (Value, expressions) pairs, the
        expressions in the loops; `body_fn(b, args)` gets the Body and the
        operands' scalars (and, last, the output's, when `init` is given)
        and returns the yielded scalar."""
        rank = len(iterators) if iterators is not None else len(out_shape)
        iterators = iterators or ["parallel"] * rank
        out_exprs = out_exprs or identity(len(out_shape))
        resolved = [self.resolve(v, e) for v, e in operands]
        out = init if init is not None else self.empty(out_shape, out_dtype)
        b = Body(self)
        args = []
        for value, _ in resolved:
            arg = self.fresh("a")
            b.types[arg] = element_type(value.dtype)
            args.append(arg)
        out_arg = self.fresh("a")
        b.types[out_arg] = element_type(out_dtype)
        result = body_fn(b, args + ([out_arg] if init is not None else []))
        result = b.cast(result, element_type(out_dtype))
        maps = [_affine(rank, [fmt(e) for e in exprs])
                for _, exprs in resolved]
        maps.append(_affine(rank, [fmt(e) for e in out_exprs]))
        names = [v.name for v, _ in resolved]
        out_name = out.name
        name = self.fresh()
        ins = ""
        if resolved:
            ins = "ins(%s : %s) " % (", ".join(names),
                                     ", ".join(v.type for v, _ in resolved))
        block_args = ", ".join(
            "%s: %s" % (a, b.types[a]) for a in args + [out_arg])
        text = ["%s = linalg.generic {indexing_maps = [%s], iterator_types = "
                "[%s]} %souts(%s : %s) {"
                % (name, ", ".join(maps),
                   ", ".join('"%s"' % it for it in iterators), ins, out_name,
                   out.type),
                "^bb0(%s):" % block_args]
        text += ["  " + line for line in b.lines]
        text.append("  linalg.yield %s : %s" % (result, b.types[result]))
        text.append("} -> %s" % out.type)
        self.emit("\n  ".join(text))
        return Value(name, out_shape, out_dtype)

    def materialize(self, x):
        """The SSA name of a lazy value, emitting what makes it."""
        if x.is_merged:
            base = x.base.name
            return self._reassociate("tensor.collapse_shape",
                                     Value(base, x.base.shape, x.dtype),
                                     x.groups, x.shape).name
        if x.dtype == x.base.dtype and self._only_unit_dims(x):
            # Unit dimensions added or dropped: a reshape, no copy.
            return self._reshape_now(x.base, x.shape).name
        copy = self.generic([(x.base, x.exprs)], x.shape, x.dtype,
                            lambda b, s: s[0])
        return copy.name

    @staticmethod
    def _only_unit_dims(x):
        """Whether View x reads its base in order, only adding or dropping
        unit dimensions."""
        last = -1
        for size, e in zip(x.base.shape, x.exprs):
            if e[0] == "c":
                if size != 1:
                    return False
                continue
            if e[0] != "d" or e[1] <= last:
                return False
            last = e[1]
        return [d for d in x.shape if d != 1] == \
            [d for d in x.base.shape if d != 1]

    def view(self, x, exprs, shape, dtype=None):
        """A View of `x` (any Value) whose base dimension expressions, in
        terms of x's dimensions, are `exprs`... given as x's dimensions
        read by the new view's dimensions: exprs[i] says how the new view
        reads x's dimension i."""
        dtype = dtype or x.dtype
        if x.is_merged:
            x.name
        if x.is_view:
            composed = [compose(e, exprs) for e in x.exprs]
            if all(c is not None for c in composed):
                return Value(None, shape, dtype, emitter=self,
                             base=x.base, exprs=composed)
            x.name
        return Value(None, shape, dtype, emitter=self, base=x,
                     exprs=list(exprs))

    def elementwise(self, operands, out_dtype, body_fn, compute=None,
                    out_shape=None):
        """A broadcasting elementwise op over tensors (Values), Indexed
        operands and Python scalars. The body computes in `compute` (by
        default the compute type of the widest float operand) and gets its
        arguments converted; compute=False leaves them as they are.

        When one operand is a Merged value of the full shape and the others
        only reach its trailing, unmerged dimensions (a bias after a
        flattened matmul), the op runs over the unmerged shape and its
        result is Merged the same way."""
        tensors = [x for x in operands if isinstance(x, Value)]
        if out_shape is None:
            out_shape = broadcast_shapes(*[x.shape for x in operands
                                           if isinstance(x, (Value, Indexed))])
        out_shape = tuple(out_shape)
        merged = self._merged_frame(operands, out_shape)
        frame = merged.base.shape if merged is not None else out_shape
        if compute is None:
            floats = [x.dtype for x in tensors if is_float(x.dtype)]
            compute = compute_type(floats[0]) if floats else (
                "f32" if any(isinstance(x, float) for x in operands)
                else element_type(tensors[0].dtype) if tensors else "f32")
        pairs = []
        for x in tensors:
            if x is merged:
                pairs.append((x.base, identity(len(frame))))
            else:
                pairs.append((x, broadcast_exprs(x.shape, frame)))

        def body(b, args):
            it = iter(args)
            scalars = []
            for x in operands:
                if isinstance(x, Indexed):
                    offset = len(frame) - len(x.shape)
                    indices = []
                    for i, size in enumerate(x.shape):
                        if size == 1 and frame[offset + i] != 1:
                            indices.append(b.op("arith.constant 0", "index"))
                        else:
                            indices.append(b.index(offset + i))
                    v = x.fn(b, indices)
                    scalars.append(b.cast(v, compute)
                                   if compute and b.types[v] != "i1" else v)
                elif isinstance(x, Value):
                    arg = next(it)
                    scalars.append(arg if compute is False
                                   else b.cast(arg, compute)
                                   if b.types[arg] != "i1" or compute == "i1"
                                   else arg)
                elif isinstance(x, bool):
                    scalars.append(b.const(x, "i1"))
                elif compute:
                    scalars.append(b.const(x, compute))
                else:
                    # Uncomputed bodies: a float scalar in the first float
                    # tensor's type, an integer one as i64.
                    floats = [element_type(v.dtype) for v in tensors
                              if is_float(v.dtype)]
                    scalars.append(b.const(x, floats[0] if floats else "f32")
                                   if isinstance(x, float)
                                   else b.const(x, "i64"))
            return body_fn(b, scalars)

        result = self.generic(pairs, frame, out_dtype, body)
        if merged is not None:
            return Value(None, out_shape, out_dtype, emitter=self,
                         base=result, groups=merged.groups)
        return result

    def _merged_frame(self, operands, out_shape):
        """The Merged operand an elementwise op can run under, or None."""
        for x in operands:
            if isinstance(x, Value) and x.is_merged and x.shape == out_shape:
                trailing = 0
                for group in reversed(x.groups):
                    if len(group) != 1:
                        break
                    trailing += 1
                ok = all(
                    (not isinstance(y, (Value, Indexed))) or y is x or
                    (len(y.shape) <= trailing and
                     not (isinstance(y, Value) and y.is_merged))
                    for y in operands)
                if ok and not any(isinstance(y, Indexed) for y in operands):
                    return x
        return None

    def reduce(self, x, dims, kind, pre=None, acc_dtype=None):
        """Reduces `x` over `dims` with `kind` ("add", "max", "min"); `pre`
        maps each element first. The result drops the dimensions and has
        the accumulator's type (f32 for f16/bf16)."""
        dims = sorted(set(d % x.rank for d in dims)) if x.rank else []
        acc_dtype = acc_dtype or (torch.float32 if x.dtype in
                                  (torch.float16, torch.bfloat16) else x.dtype)
        acc_ty = element_type(acc_dtype)
        out_shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
        identity_value = {"add": 0.0, "max": float("-inf"),
                          "min": float("inf")}[kind]
        init = self.fill(identity_value if is_float(acc_dtype) else int(
            {"add": 0, "max": -(2 ** 63), "min": 2 ** 63 - 1}[kind]),
            out_shape, acc_dtype)
        iterators = ["reduction" if i in dims else "parallel"
                     for i in range(x.rank)]
        out_exprs = [("d", i) for i in range(x.rank) if i not in dims]

        def body(b, args):
            v = b.cast(args[0], acc_ty)
            if pre is not None:
                v = pre(b, v)
            combine = {"add": ("arith.addf", "arith.addi"),
                       "max": ("arith.maximumf", "arith.maxsi"),
                       "min": ("arith.minimumf", "arith.minsi")}[kind]
            return b.binary(combine[0], combine[1], v, args[1])

        return self.generic([(x, identity(x.rank))], out_shape, acc_dtype,
                            body, iterators=iterators, out_exprs=out_exprs,
                            init=init)

    def convert(self, x, dtype):
        if x.dtype == dtype:
            return x
        width = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32,
                 torch.float64: 64}
        if width.get(dtype, 0) > width.get(x.dtype, 99):
            # A widening is lazy: whoever reads it extends in its body (an
            # RMSNorm computed in f32 then reads its bf16 input whole).
            return self.view(x, identity(x.rank), x.shape, dtype)
        return self.elementwise([x], dtype, lambda b, s: s[0], compute=False)

    # -- layout -----------------------------------------------------------

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if shape == x.shape:
            return x
        if math.prod(shape) != math.prod(x.shape):
            raise FrontendError("cannot view %s as %s" % (list(x.shape),
                                                          list(shape)))
        if x.is_merged and shape == x.base.shape:
            return x.base  # a flattening undone
        if x.is_merged:
            # Another flattening of the same base (heads split back out of
            # a flattened batch): one collapse of the base.
            groups = _reshape_groups(x.base.shape, shape)
            if groups is not None and all(len(d) == 1 for _, d in groups):
                return Value(None, shape, x.dtype, emitter=self,
                             base=x.base, groups=[g for g, _ in groups])
        groups = _reshape_groups(x.shape, shape)
        if groups is None:
            # No common refinement: through one dimension.
            if x.rank == 1:
                raise FrontendError("cannot reshape %s to %s"
                                    % (list(x.shape), list(shape)))
            flat = self.reshape(x, (math.prod(x.shape),))
            return self.reshape(flat, shape)
        if all(len(dst) == 1 for _, dst in groups):
            if x.is_view:
                # A broadcast collapsed into the dimension before it (a
                # mask expanded over heads and flattened with the batch)
                # is that dimension read with a floordiv: no copy.
                view = self._collapse_view(x, [src for src, _ in groups],
                                           shape)
                if view is not None:
                    return view
            # Only collapsing: lazy, so a contraction can read the dims (a
            # collapse of a collapse is one collapse of the first base).
            merged = [src for src, _ in groups]
            if x.is_merged:
                merged = [[d for i in g for d in x.groups[i]] for g in merged]
                x = x.base
            return Value(None, shape, x.dtype, emitter=self, base=x,
                         groups=merged)
        # Otherwise, only unit dimensions added or removed: a view (a unit
        # dimension kept where both have one, read at 0 where dropped).
        if [d for d in shape if d != 1] == [d for d in x.shape if d != 1]:
            exprs, j = [], 0
            for size in x.shape:
                if j < len(shape) and shape[j] == size:
                    exprs.append(("d", j))
                    j += 1
                    continue
                if size == 1:
                    exprs.append(("c", 0))
                    continue
                while shape[j] == 1:
                    j += 1
                exprs.append(("d", j))
                j += 1
            return self.view(x, exprs, shape)
        return self._reshape_now(x, shape, groups)

    def _collapse_view(self, x, groups, shape):
        """View `x` with each group of its dimensions collapsed into one,
        as a View of its base, where every group holds at most one
        dimension the base is read along, and only broadcast (or unit)
        dimensions after it: the base is then read at the collapsed index
        floordiv the broadcast's size. None otherwise."""
        readers = {}  # x's dimension -> the base dimensions reading it
        for b, e in enumerate(x.exprs):
            if e[0] == "fd":
                return None
            if e[0] == "d":
                readers.setdefault(e[1], []).append(b)
        exprs = list(x.exprs)
        for g, dims in enumerate(groups):
            real = [i for i in dims if i in readers and x.shape[i] != 1]
            if len(real) > 1 or any(len(readers[i]) > 1 for i in real):
                return None
            for i in dims:  # unit dimensions of x: read at 0
                for b in readers.get(i, []):
                    if x.shape[i] == 1:
                        exprs[b] = ("c", 0)
            if not real:
                continue
            r = real[0]
            before = [i for i in dims if i < r and x.shape[i] != 1]
            if before:
                return None  # a broadcast before it: a modulo, not a floordiv
            after = math.prod(x.shape[i] for i in dims if i > r)
            exprs[readers[r][0]] = ("d", g) if after == 1 else ("fd", g,
                                                                 after)
        return Value(None, shape, x.dtype, emitter=self, base=x.base,
                     exprs=exprs)

    def regroup(self, x, shape, groups):
        """x reshaped to `shape` as written, by a tensor.collapse_shape
        and/or expand_shape regrouping (source dimensions, target
        dimensions) pairs `groups`: never a lazy view or a copy, even where
        only unit dimensions change (a front end's linalg writes grouped and
        depthwise convolutions with these reshapes around them)."""
        return self._reshape_now(x, shape, groups)

    def _reshape_now(self, x, shape, groups=None):
        """x reshaped by tensor.collapse_shape/expand_shape (free in ein)."""
        shape = tuple(shape)
        if shape == x.shape:
            return x
        groups = groups or _reshape_groups(x.shape, shape)
        if groups is None:
            flat = self._reshape_now(x, (math.prod(x.shape),))
            return self._reshape_now(flat, shape)
        # Collapse each group to one dimension, then expand to the target.
        mid = tuple(math.prod(x.shape[i] for i in src) for src, _ in groups)
        y = x
        if mid != x.shape:
            y = self._reassociate("tensor.collapse_shape", x,
                                  [src for src, _ in groups], mid)
        if mid != shape:
            y = self._reassociate("tensor.expand_shape", y,
                                  [dst for _, dst in groups], shape)
        return y

    def _reassociate(self, opname, x, groups, shape):
        name = self.fresh()
        out = tensor_type(shape, x.dtype)
        text = "[%s]" % ", ".join("[%s]" % ", ".join(str(i) for i in g)
                                  for g in groups)
        source = x.name
        if opname == "tensor.expand_shape":
            self.emit("%s = tensor.expand_shape %s %s output_shape [%s] : %s "
                      "into %s" % (name, source, text,
                                   ", ".join(str(d) for d in shape), x.type,
                                   out))
        else:
            self.emit("%s = tensor.collapse_shape %s %s : %s into %s"
                      % (name, source, text, x.type, out))
        return Value(name, shape, x.dtype)

    def transpose(self, x, perm):
        perm = [p % x.rank for p in perm] if x.rank else []
        if perm == list(range(x.rank)):
            return x
        if x.is_merged:
            # A permutation of flattened groups: the base permuted group by
            # group, flattened again (a key's repeated heads stay lazy).
            base = self.transpose(x.base, [d for g in perm
                                           for d in x.groups[g]])
            groups, at = [], 0
            for g in perm:
                groups.append(list(range(at, at + len(x.groups[g]))))
                at += len(x.groups[g])
            return Value(None, tuple(x.shape[p] for p in perm), x.dtype,
                         emitter=self, base=base, groups=groups)
        shape = tuple(x.shape[p] for p in perm)
        # Dimension b of x is dimension perm.index(b) of the result.
        return self.view(x, [("d", perm.index(b)) for b in range(x.rank)],
                         shape)

    def broadcast_to(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if shape == x.shape:
            return x
        return self.view(x, broadcast_exprs(x.shape, shape), shape)

    def repeat_interleave(self, x, dim, count):
        """Each index of dimension `dim` repeated `count` times, read with a
        floordiv (GQA's key/value heads)."""
        shape = list(x.shape)
        shape[dim] *= count
        exprs = identity(x.rank)
        exprs[dim] = ("fd", dim, count)
        if x.is_view and any(e[0] == "fd" for e in x.exprs):
            x.name
        return self.view(x, exprs, shape)

    def extract_slice(self, x, offsets, sizes, drop=()):
        """A static slice; `drop` lists unit dimensions the result loses."""
        shape = tuple(s for i, s in enumerate(sizes) if i not in drop)
        if tuple(sizes) == x.shape and not drop:
            return x
        name = self.fresh()
        out = tensor_type(shape, x.dtype)
        source = x.name
        self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s"
                  % (name, source, ", ".join(str(o) for o in offsets),
                     ", ".join(str(s) for s in sizes),
                     ", ".join("1" for _ in sizes), x.type, out))
        return Value(name, shape, x.dtype)

    def concat(self, values, dim):
        if len(values) == 1:
            return values[0]
        dim %= values[0].rank
        shape = list(values[0].shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        names = [v.name for v in values]
        name = self.fresh()
        out = tensor_type(shape, values[0].dtype)
        self.emit("%s = tensor.concat dim(%d) %s : (%s) -> %s"
                  % (name, dim, ", ".join(names),
                     ", ".join(v.type for v in values), out))
        return Value(name, shape, values[0].dtype)

    # -- contractions -----------------------------------------------------

    def matmul(self, a, b):
        """a [.., m, k] @ b [.., k, n] (mm, or bmm with one batch dimension)
        as one contraction generic. Where the batch (or, for mm, the row)
        dimension is a flattening of several (PyTorch's matmul and linear
        flatten leading dimensions), the contraction runs over them
        unflattened and its result is Merged back, so the program keeps
        every dimension a plan may cut (heads, tokens)."""
        if a.dtype != b.dtype:
            raise FrontendError("a product of %s and %s tensors"
                                % (a.dtype, b.dtype))
        if not ((a.rank == 2 and b.rank == 2) or
                (a.rank == 3 and b.rank == 3)):
            raise FrontendError("a product of rank %d and rank %d tensors"
                                % (a.rank, b.rank))
        batched = a.rank == 3
        # The leading dims of a (batch for bmm, rows for mm), unflattened
        # where a is a flattening whose other groups are single dims.
        lead_a = self._unflattened(a)
        lead_b = self._unflattened(b) if batched else None
        # The first operand's batch as the model flattened it.
        lead_a_sizes = lead_a[1] if lead_a else None
        if batched and lead_a and lead_b and lead_a[1] != lead_b[1]:
            # Both flatten the batch, one more finely (a query's 32 heads
            # against a key's 8 x 4 repeated ones): split the coarser
            # (a reshape, free) so both run over the finer dimensions.
            refined = _common_refinement(lead_a[1], lead_b[1])
            if refined is not None:
                lead_a = (self._split_lead(lead_a[0], len(lead_a[1]),
                                           refined), refined)
                lead_b = (self._split_lead(lead_b[0], len(lead_b[1]),
                                           refined), refined)
        if batched and (lead_a is None or lead_b is None or
                        lead_a[1] != lead_b[1]):
            lead_a = lead_b = None
        m, k = a.shape[-2], a.shape[-1]
        n = b.shape[-1]

        if batched:
            lead = list(lead_a[1]) if lead_a else [a.shape[0]]
        else:
            lead = list(lead_a[1]) if lead_a else [m]
        nl = len(lead)
        # Loops: lead..., [m (bmm)], n, k.
        if batched:
            rank = nl + 3
            mi, ni, ki = nl, nl + 1, nl + 2
            a_exprs = [("d", i) for i in range(nl)] + [("d", mi), ("d", ki)]
            b_exprs = [("d", i) for i in range(nl)] + [("d", ki), ("d", ni)]
            out_shape = tuple(lead) + (m, n)
        else:
            rank = nl + 2
            ni, ki = nl, nl + 1
            a_exprs = [("d", i) for i in range(nl)] + [("d", ki)]
            b_exprs = [("d", ki), ("d", ni)]
            out_shape = tuple(lead) + (n,)
        a_read = lead_a[0] if lead_a else a
        b_read = lead_b[0] if (batched and lead_b) else b
        if not lead_a:
            a_exprs = ([("d", 0), ("d", mi), ("d", ki)] if batched
                       else [("d", 0), ("d", ki)])
        if batched and not lead_b:
            b_exprs = [("d", 0), ("d", ki), ("d", ni)]
        if batched:
            # A batched product reads its operands batch-major, as a fused
            # attention's kernel does ([.., heads, tokens, dim]): a view
            # that moves batch dimensions is copied so (the last two
            # dimensions may stay transposed).
            a_read = self._batch_major(a_read, nl if lead_a else 1)
            b_read = self._batch_major(b_read, nl if lead_b else 1)
        zero = self.fill(0, out_shape, a.dtype)
        iterators = ["parallel"] * (rank - 1) + ["reduction"]
        out_exprs = identity(len(out_shape))

        out_ty = element_type(a.dtype)

        def body(bb, s):
            # Operands read through a widening arrive narrower: extended.
            x, y = bb.cast(s[0], out_ty), bb.cast(s[1], out_ty)
            p = bb.binary("arith.mulf", "arith.muli", x, y)
            return bb.binary("arith.addf", "arith.addi", s[2], p)

        result = self.generic([(a_read, a_exprs), (b_read, b_exprs)],
                              out_shape, a.dtype, body, iterators=iterators,
                              out_exprs=out_exprs, init=zero)
        shape = (a.shape[0], m, n) if batched else (m, n)
        if result.shape == shape:
            return result
        if batched and lead_a_sizes and tuple(lead) != tuple(lead_a_sizes):
            # Run over the finer batch, the result is flattened back to the
            # first operand's (scores over 32 heads, not 8 x 4): what
            # follows reads heads as the model wrote them.
            result = self._reshape_now(result,
                                       tuple(lead_a_sizes) + (m, n))
            nl = len(lead_a_sizes)
        if batched:
            groups = [list(range(nl)), [nl], [nl + 1]]
        else:
            groups = [list(range(nl)), [nl]]
        return Value(None, shape, a.dtype, emitter=self, base=result,
                     groups=groups)

    def _split_lead(self, x, count, refined):
        """x with its first `count` dimensions reshaped to `refined`."""
        shape = tuple(refined) + x.shape[count:]
        return x if shape == x.shape else self.reshape(x, shape)

    def _batch_major(self, x, batch):
        """x, materialized unless it is a View that reads its base's first
        `batch` dimensions as its own first ones, in order (a repeat or a
        broadcast of them allowed)."""
        if not x.is_view:
            return x
        ok = len(x.exprs) >= batch and all(
            e[0] == "c" or e[1] == i for i, e in enumerate(x.exprs[:batch]))
        ok = ok and all(e[0] == "c" or e[1] >= batch
                        for e in x.exprs[batch:])
        if ok:
            return x
        n = x.rank
        if all(e[0] in ("d", "fd") or x.base.shape[b] == 1
               for b, e in enumerate(x.exprs)):
            # Copy the base batch-major, its last two dimensions in the
            # base's order, and read the copy through the rest of the view
            # (a key stays [.., tokens, dim] in memory, read as k^T; GQA's
            # key/value heads stay unrepeated, read with the floordiv).
            def key(b):
                if x.exprs[b][0] == "c":  # a unit dimension read at 0
                    return (-1, b)
                v = x.exprs[b][1]
                return (v if v < n - 2 else n - 2, b)
            rank = len(x.exprs)
            order = sorted(range(rank), key=key)  # copy dim j = base order[j]
            copy = Value(None, [x.base.shape[b] for b in order], x.dtype,
                         emitter=self, base=x.base,
                         exprs=[("d", order.index(b)) for b in range(rank)])
            copy.name
            return Value(None, x.shape, x.dtype, emitter=self, base=copy,
                         exprs=[x.exprs[b] for b in order])
        x.name
        return x

    def _unflattened(self, x):
        """(the Value with x's first dimension unflattened, its leading
        sizes) when x is Merged."""
        if x.is_view and self._only_unit_dims(x):
            # Leading unit dimensions dropped ([1, h, s, d] read as
            # [h, s, d]): the same as flattening them into the first.
            first = next(b for b, e in enumerate(x.exprs) if e[0] == "d")
            if x.exprs[first] == ("d", 0) and all(
                    e == ("d", b - first)
                    for b, e in enumerate(x.exprs) if b > first):
                return x.base, tuple(x.base.shape[:first + 1])
            return None
        if not x.is_merged:
            return None
        lead, rest = x.groups[0], x.groups[1:]
        sizes = tuple(x.base.shape[i] for i in lead)
        if all(len(g) == 1 for g in rest):
            return x.base, sizes
        # Other groups flattened too (heads x head_dim before an output
        # projection): those are collapsed, the leading ones kept apart.
        inner = Value(None, sizes + tuple(
            math.prod(x.base.shape[i] for i in g) for g in rest), x.dtype,
            emitter=self, base=x.base,
            groups=[[i] for i in lead] + [list(g) for g in rest])
        return inner, sizes

    # -- windows (the importer takes them with the import-coverage issue) --

    def pad(self, x, low, high, value):
        """tensor.pad of x with `value`."""
        if not any(low) and not any(high):
            return x
        shape = tuple(d + lo + hi for d, lo, hi in zip(x.shape, low, high))
        ty = element_type(x.dtype)
        source = x.name
        name = self.fresh()
        cst = self.fresh("c")
        args = ", ".join("%s: index" % self.fresh("i") for _ in x.shape)
        literal = float_literal(value, ty) if is_float(x.dtype) \
            else str(int(value))
        self.emit("%s = arith.constant %s : %s" % (cst, literal, ty))
        self.emit("%s = tensor.pad %s low[%s] high[%s] {\n  ^bb0(%s):\n"
                  "    tensor.yield %s : %s\n  } : %s to %s"
                  % (name, source, ", ".join(map(str, low)),
                     ", ".join(map(str, high)), args, cst, ty, x.type,
                     tensor_type(shape, x.dtype)))
        return Value(name, shape, x.dtype)

    def window_op(self, op, inputs, out_shape, init_value, strides,
                  dilations):
        """A named convolution or pooling op of linalg over `inputs`."""
        init = self.fill(init_value, out_shape, inputs[0].dtype)
        names = [v.name for v in inputs]
        name = self.fresh()
        self.emit("%s = %s {dilations = dense<[%s]> : vector<2xi64>, "
                  "strides = dense<[%s]> : vector<2xi64>} ins(%s : %s) "
                  "outs(%s : %s) -> %s"
                  % (name, op, ", ".join(map(str, dilations)),
                     ", ".join(map(str, strides)), ", ".join(names),
                     ", ".join(v.type for v in inputs), init.name,
                     init.type, init.type))
        return Value(name, out_shape, inputs[0].dtype)

    def arg_reduce(self, x, dim, kind):
        """The running maximum (minimum) of `x` along `dim` and its index,
        as torch-mlir writes argmax: one generic with two results, from
        -inf (+inf) and index 0, taking an element strictly above the
        running maximum (so the first of equal ones). Returns (values,
        indices), the indices int64."""
        dim %= x.rank
        out_shape = tuple(s for i, s in enumerate(x.shape) if i != dim)
        ty = element_type(x.dtype)
        start = self.fill(float("-inf") if kind == "max" else float("inf"),
                          out_shape, x.dtype)
        first = self.fill(0, out_shape, torch.int64)
        source = x.name
        name = self.fresh()
        a, m, i, k, ki, c, mv, ni = (self.fresh("a") for _ in range(8))
        kept = [("d", j) for j in range(x.rank) if j != dim]
        maps = [_affine(x.rank, [fmt(e) for e in identity(x.rank)]),
                _affine(x.rank, [fmt(e) for e in kept]),
                _affine(x.rank, [fmt(e) for e in kept])]
        iterators = ", ".join('"%s"' % ("reduction" if j == dim else
                                        "parallel") for j in range(x.rank))
        text = [
            "%s:2 = linalg.generic {indexing_maps = [%s], iterator_types = "
            "[%s]} ins(%s : %s) outs(%s, %s : %s, %s) {"
            % (name, ", ".join(maps), iterators, source, x.type, start.name,
               first.name, start.type, first.type),
            "^bb0(%s: %s, %s: %s, %s: i64):" % (a, ty, m, ty, i),
            "  %s = linalg.index %d : index" % (k, dim),
            "  %s = arith.index_cast %s : index to i64" % (ki, k),
            "  %s = arith.cmpf %s, %s, %s : %s"
            % (c, "ogt" if kind == "max" else "olt", a, m, ty),
            "  %s = arith.select %s, %s, %s : %s" % (mv, c, a, m, ty),
            "  %s = arith.select %s, %s, %s : i64" % (ni, c, ki, i),
            "  linalg.yield %s, %s : %s, i64" % (mv, ni, ty),
            "} -> (%s, %s)" % (start.type, first.type)]
        self.emit("\n  ".join(text))
        return (Value(name + "#0", out_shape, x.dtype),
                Value(name + "#1", out_shape, torch.int64))

    def softmax(self, x, dim):
        out = self.empty(x.shape, x.dtype)
        source = x.name
        name = self.fresh()
        self.emit("%s = linalg.softmax dimension(%d) ins(%s : %s) outs(%s : "
                  "%s) -> %s" % (name, dim % x.rank, source, x.type, out.name,
                                 out.type, out.type))
        return Value(name, x.shape, x.dtype)


def _common_refinement(a, b):
    """The dimensions both factorizations `a` and `b` (of one size) are
    made of, or None (unit dimensions kept where either has one)."""
    a, b = list(a), list(b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if x == y:
            out.append(x)
            i, j = i + 1, j + 1
        elif x == 1:
            out.append(1)
            i += 1
        elif y == 1:
            out.append(1)
            j += 1
        elif x % y == 0:
            out.append(y)
            a[i] = x // y
            j += 1
        elif y % x == 0:
            out.append(x)
            b[j] = y // x
            i += 1
        else:
            return None
    if any(d != 1 for d in a[i:] + b[j:]):
        return None
    return out + [1] * (len(a) - i + len(b) - j)


def _reshape_groups(src, dst):
    """Groups of consecutive source and target dimensions with equal
    products, or None where there are none (a reshape that is neither a
    refinement nor a coarsening, group by group)."""
    groups = []
    i = j = 0
    while i < len(src) or j < len(dst):
        gs, gd = [], []
        ps = pd = 1
        if i < len(src):
            gs.append(i)
            ps *= src[i]
            i += 1
        if j < len(dst):
            gd.append(j)
            pd *= dst[j]
            j += 1
        while ps != pd:
            if ps < pd and i < len(src):
                gs.append(i)
                ps *= src[i]
                i += 1
            elif pd < ps and j < len(dst):
                gd.append(j)
                pd *= dst[j]
                j += 1
            else:
                return None
        groups.append((gs, gd))
    # Unit dimensions left over (a group with one side empty) join the
    # group before them, or after them at the start.
    merged = []
    for gs, gd in groups:
        if (not gs or not gd) and merged:
            merged[-1] = (merged[-1][0] + gs, merged[-1][1] + gd)
        else:
            merged.append((gs, gd))
    if len(merged) > 1 and (not merged[0][0] or not merged[0][1]):
        first = merged.pop(0)
        merged[0] = (first[0] + merged[0][0], first[1] + merged[0][1])
    if any(not gs or not gd for gs, gd in merged):
        return None
    return merged
