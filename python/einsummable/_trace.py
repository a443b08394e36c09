"""Tracing a model to an ATen graph.

On PyTorch 2 the model is exported first (`torch.export.export`,
non-strict): the path transformers and torchvision support, on which code
that reads values while it runs in eager mode (transformers' causal masks)
takes its export branch. The exported graph is then replayed under make_fx
with the front end's decompositions, so the graph the translator reads has
the same ops on every PyTorch, and each node keeps the model line the
export recorded. On PyTorch 1.13 (no torch.export) the model is traced by
make_fx directly. A model export refuses is traced by make_fx as well;
when both fail, both reasons are reported.

Parameters and buffers become arguments of the traced function (weights),
through `functional_call`, so their values are bound when a bundle loads
rather than baked into the program; tied weights (one tensor under several
names) are one argument. In-place ops are functionalized first. Each node
keeps the model's source line it came from. PyTorch's fused inference
fast paths (nn.MultiheadAttention, nn.TransformerEncoderLayer) are kept
out of the trace, so those modules are traced as their ordinary ops.
"""

import os
import re
import threading

import torch
from torch.fx.experimental import proxy_tensor
from torch.overrides import TorchFunctionMode

from ._errors import FrontendError

try:  # PyTorch 2
    from torch.func import functional_call as _functional_call
    from torch.func import functionalize as _functionalize
except ImportError:  # PyTorch 1.13 (Debian 12)
    from torch.nn.utils.stateless import functional_call as _functional_call
    from functorch import functionalize as _functionalize

aten = torch.ops.aten

# Held while a model is traced (and, by export, translated): PyTorch's
# tracer is not safe for two threads at once (functorch's DynamicLayer
# asserts), and trace() sets a class attribute of make_fx's tracer.
LOCK = threading.RLock()

# Ops make_fx keeps that PyTorch's own decomposition tables turn into ops
# the front end takes (those missing from a PyTorch version are skipped).
_DECOMPOSE = [
    "hardtanh", "hardswish", "hardsigmoid", "leaky_relu", "elu", "softplus",
    "mish", "addcmul", "addcdiv", "lerp", "std", "std_mean", "glu", "rsub",
    "mv", "dot", "baddbmm", "native_group_norm",
    "native_batch_norm", "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit", "square", "frac", "logit", "sgn",
    "nan_to_num", "xlogy", "celu", "selu", "relu6", "threshold",
    "log_sigmoid_forward", "_unsafe_index", "diag_embed", "trace",
    "mse_loss",
]


def _decompositions():
    from torch._decomp import get_decompositions
    ops = [getattr(aten, name) for name in _DECOMPOSE if hasattr(aten, name)]
    return get_decompositions(ops)


def _library_dirs():
    dirs = [os.path.dirname(torch.__file__) + os.sep,
            os.path.dirname(os.path.abspath(__file__)) + os.sep]
    try:
        import functorch
        dirs.append(os.path.dirname(functorch.__file__) + os.sep)
    except ImportError:
        pass
    return tuple(dirs)


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')

# The function make_fx traces (`forward` in _trace below): frames outside
# it (the tracer, compile()'s caller) are not the model's.
_WRAPPER = os.path.abspath(__file__)


def _torch_nn_dir():
    return os.path.join(os.path.dirname(torch.__file__), "nn") + os.sep


def locate(node):
    """(text, file, line, column) of the model source line `node` came
    from, or None: the innermost frame of the model's own code, or, for
    code that is all PyTorch's (an nn.TransformerEncoderLayer compiled by
    itself), the innermost line of torch.nn (its module or functional
    code) that issued the op."""
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace",
                                                    None)
    if not trace:
        return None
    frames = _FRAME.findall(trace)
    if not _INNERMOST_FIRST:
        frames.reverse()
    # Only frames inside the traced function: the model's.
    for i, (path, _, function) in enumerate(frames):
        if function == "forward" and os.path.abspath(path) == _WRAPPER:
            frames = frames[:i]
            break
    # Not generated code ("<string>", "<eval_with_key>").
    frames = [(path, int(line)) for path, line, _ in frames
              if not path.startswith("<")]
    skip = _library_dirs()
    user = [(path, line) for path, line in frames
            if not os.path.abspath(path).startswith(skip)]
    if not user:
        nn_dir = _torch_nn_dir()
        user = [(path, line) for path, line in frames
                if os.path.abspath(path).startswith(nn_dir)]
    if not user:
        return None
    path, line = user[0]
    return ("%s:%d" % (path, line), path, line, 1)


# How the recorded stack lists frames: PyTorch 1.13 walks out from the
# innermost frame; PyTorch 2 formats the stack outermost first.
_INNERMOST_FIRST = torch.__version__.startswith("1.")


def _attention_op():
    """`einsummable::attention`, PyTorch's scaled_dot_product_attention
    as an op of our own (PyTorch 2.4 and later: torch.library.custom_op),
    else None. Traced, `F.scaled_dot_product_attention` is built-in and
    composite: make_fx breaks it into whichever backend PyTorch picks for
    the tensors at hand, and where that is the math form (BERT's, with a
    mask) the graph holds q and k widened to f32, each scaled by the
    square root of the scale, an f32 batched matmul and a safe softmax,
    which ein cannot fuse back into one attention. Recorded as this op,
    the call stays whole and reaches the front end as the model wrote
    it."""
    library = getattr(torch, "library", None)
    if library is None or not hasattr(library, "custom_op"):
        return None
    if hasattr(torch.ops, "einsummable") and \
            hasattr(torch.ops.einsummable, "attention"):
        return torch.ops.einsummable.attention.default
    from typing import Optional

    @library.custom_op("einsummable::attention", mutates_args=())
    def attention(query: torch.Tensor, key: torch.Tensor,
                  value: torch.Tensor, attn_mask: Optional[torch.Tensor],
                  dropout_p: float, is_causal: bool, scale: Optional[float],
                  enable_gqa: bool) -> torch.Tensor:
        # Not through _NoFastPath again (it would call this op).
        extra = {"enable_gqa": True} if enable_gqa else {}
        with torch._C.DisableTorchFunction():
            return torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                is_causal=is_causal, scale=scale, **extra)

    @attention.register_fake
    def _(query, key, value, attn_mask, dropout_p, is_causal, scale,
          enable_gqa):
        return query.new_empty(query.shape[:-1] + value.shape[-1:])
    return torch.ops.einsummable.attention.default


_SDPA = getattr(torch.nn.functional, "scaled_dot_product_attention", None)


def _sdpa_arguments(query, key, value, attn_mask=None, dropout_p=0.0,
                    is_causal=False, scale=None, enable_gqa=False):
    return (query, key, value, attn_mask, float(dropout_p), bool(is_causal),
            None if scale is None else float(scale), bool(enable_gqa))


class _NoFastPath(TorchFunctionMode):
    """A mode that passes every call through unchanged. While one is
    active, `torch.overrides.has_torch_function` is true of every tensor,
    which is one of the documented conditions that keep
    nn.MultiheadAttention, nn.TransformerEncoderLayer and
    nn.TransformerEncoder off their fused inference fast paths
    (`aten._native_multi_head_attention`,
    `aten._transformer_encoder_layer_fwd`, nested tensors): traced in it,
    they record their ordinary ops (linear, bmm, softmax, layer_norm),
    which the front end translates. `F.scaled_dot_product_attention` is
    recorded whole, as `einsummable::attention` (where PyTorch has custom
    ops). Nothing else PyTorch traces changes."""

    def __init__(self):
        super().__init__()
        self.attention = _attention_op() if _SDPA is not None else None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is _SDPA and self.attention is not None:
            return self.attention(*_sdpa_arguments(*args, **(kwargs or {})))
        return func(*args, **(kwargs or {}))


class Traced:
    """A traced model: the graph, its arguments in order (inputs, then
    weights) and how its results nest (`output_names`: the keys of a
    mapping result, as transformers' ModelOutput, else None)."""

    def __init__(self, graph, arguments, output_kind, num_outputs,
                 output_names=None):
        self.graph = graph
        self.arguments = arguments
        self.output_kind = output_kind
        self.num_outputs = num_outputs
        self.output_names = output_names


# torch.export, where this PyTorch has it (2.1 and later).
HAS_EXPORT = hasattr(torch, "export") and hasattr(torch.export, "export")


def _flatten_result(out, structure):
    """The model's result as a tensor or a tuple of tensors, recording in
    `structure` how it nested. A mapping (transformers' ModelOutput, a
    dict) gives its tensor values in order, their keys kept; fields that
    are None are left out, and any other value is refused by name."""
    if isinstance(out, torch.Tensor):
        structure["kind"] = "tensor"
        return out
    if isinstance(out, (tuple, list)) and all(
            isinstance(o, torch.Tensor) for o in out):
        structure["kind"] = type(out).__name__
        return tuple(out)
    if isinstance(out, dict):
        names, values = [], []
        for key, value in out.items():
            if value is None:
                continue
            if not isinstance(value, torch.Tensor):
                hint = ""
                if "past_key_values" in str(key) or "cache" in str(key):
                    hint = ("; a bundle keeps no cache between calls: build "
                            "the model with use_cache=False (e.g. "
                            "config.use_cache = False)")
                raise FrontendError(
                    "the model's result field '%s' is a %s, not a tensor%s"
                    % (key, type(value).__name__, hint))
            names.append(str(key))
            values.append(value)
        if not values:
            raise FrontendError("the model's result (%s) holds no tensor"
                                % type(out).__name__)
        structure["kind"] = "dict"
        structure["names"] = names
        return tuple(values)
    raise FrontendError(
        "the model returns %s; it must return a tensor, a tuple or list of "
        "tensors, or a mapping of them (as transformers' ModelOutput)"
        % type(out).__name__)


def weights_of(model):
    """[(name, tensor)] of `model`'s parameters and buffers, one entry per
    tensor (the first name it is found under), and {name: index} for every
    name, tied ones included."""
    unique, index = [], {}
    seen = {}
    if not isinstance(model, torch.nn.Module):
        return unique, index
    for prefix, module in model.named_modules(remove_duplicate=False):
        for kind in ("_parameters", "_buffers"):
            for name, tensor in getattr(module, kind).items():
                if tensor is None:
                    continue
                full = prefix + "." + name if prefix else name
                key = id(tensor)
                if key not in seen:
                    seen[key] = len(unique)
                    unique.append((full, tensor))
                index[full] = seen[key]
    return unique, index


def trace(model, example_inputs):
    with LOCK:
        return _trace(model, example_inputs)


def _trace(model, example_inputs):
    if isinstance(model, torch.nn.Module) and model.training:
        raise FrontendError("the model is in training mode; call "
                            "model.eval() before compiling it")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            raise FrontendError("example input %d is a %s; inputs must be "
                                "tensors" % (i, type(x).__name__))
    # Traced where the model lives (a CUDA model traces on its GPU: the
    # trace runs every op once).
    inputs = [x.detach() for x in example_inputs]
    weights, names = weights_of(model)
    weight_values = [w.detach() for _, w in weights]
    n = len(inputs)
    structure = {}

    def forward(*flat):
        if isinstance(model, torch.nn.Module):
            bound = {name: flat[n + i] for name, i in names.items()}
            out = _functional_call(model, bound, tuple(flat[:n]))
        else:
            out = model(*flat[:n])
        return _flatten_result(out, structure)

    flat = (*inputs, *weight_values)
    if HAS_EXPORT:
        try:
            graph = _trace_exported(forward, flat)
        except FrontendError:
            raise
        except Exception as error:
            # Export refuses some models make_fx takes (and the other way
            # round): try make_fx before giving up, and name both reasons.
            try:
                graph = _make_fx(forward, flat)
            except FrontendError:
                raise
            except Exception as second:
                raise FrontendError(
                    "tracing the model failed: torch.export: %s: %s; "
                    "make_fx: %s: %s" % (type(error).__name__,
                                         _first_lines(error),
                                         type(second).__name__,
                                         _first_lines(second))) from error
    else:
        try:
            graph = _make_fx(forward, flat)
        except FrontendError:
            raise
        except Exception as error:  # a data-dependent shape, an op
            raise FrontendError("tracing the model failed: %s: %s"
                                % (type(error).__name__, error)) from error
    arguments = [("input", "input%d" % i, x) for i, x in enumerate(inputs)]
    arguments += [("weight", name, w) for (name, _), w in
                  zip(weights, weight_values)]
    outputs = [n for n in graph.graph.nodes if n.op == "output"][0].args[0]
    count = len(outputs) if isinstance(outputs, (tuple, list)) else 1
    return Traced(graph, arguments, structure.get("kind", "tensor"), count,
                  structure.get("names"))


def _first_lines(error, lines=12):
    """An exception's message, cut to its first lines (export's messages
    carry pages of advice)."""
    text = str(error).strip().splitlines()
    return "\n".join(text[:lines]) + ("\n..." if len(text) > lines else "")


def _make_fx(fn, flat):
    """make_fx of `fn` on `flat`, functionalized, with the front end's
    decompositions and each node's stack (the model line) recorded."""
    tracer = proxy_tensor.PythonKeyTracer
    had = tracer.__dict__.get("record_stack_traces")
    tracer.record_stack_traces = True
    try:
        with torch.no_grad(), _NoFastPath():
            return proxy_tensor.make_fx(
                _functionalize(fn),
                decomposition_table=_decompositions())(*flat)
    finally:
        if had is None:
            del tracer.record_stack_traces
        else:
            tracer.record_stack_traces = had


class _Flat(torch.nn.Module):
    """`forward` (the model with its weights as arguments) as a module
    without state, as torch.export takes it."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *flat):
        return self.fn(*flat)


def _trace_exported(forward, flat):
    """torch.export (non-strict) of `forward` on `flat`, replayed under
    make_fx: node by node through an fx Interpreter with each exported
    node's metadata current, so the nodes make_fx records carry the model
    line export recorded for the node they came from."""
    from torch.fx import traceback as fx_traceback
    with torch.no_grad(), _NoFastPath():
        program = torch.export.export(_Flat(forward), flat, strict=False)
    module = program.module()

    def replay(*args):
        return torch.fx.Interpreter(module).run(*args)

    with fx_traceback.preserve_node_meta():
        return _make_fx(replay, flat)
