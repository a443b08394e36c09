"""Training: `compile_training` traces `loss_fn(model(*inputs[:-1]),
inputs[-1])`, reads the PyTorch optimizer it is given (SGD or AdamW), and
compiles one step (forward, gradients by ein-autodiff, the optimizer's
update) with `ein-compile --optimizer`. A `Trainer` runs steps and writes
the weights and the optimizer's state back into the model and the
optimizer (`sync`), where PyTorch's own tools checkpoint them.

The weights and the optimizer's state stay on the bundle's devices
between steps: each step's updated values (the outputs the bundle marks
`updates`, ein-autodiff's `ein.updates`) are carried into the inputs they
replace by the runtime (ein_bundle_carry), device to device; only the
batch, the learning rate and the step count cross from the host, and only
the loss comes back, until `sync()` reads the weights and state."""

import inspect
import json
import os
import shutil
import tempfile
import threading

import torch

from . import _dtype, _export, _runtime  # _dtype: __init__ defines it first
from ._errors import FrontendError

# What a step's bundle holds after the exported arguments: the learning
# rate, AdamW's step count, then each trained parameter's state, in this
# order (ein-autodiff's `optimizer` option).
_STATE = {"sgd": ("momentum_buffer",), "adamw": ("exp_avg", "exp_avg_sq")}


class _WithLoss(torch.nn.Module):
    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *inputs):
        return self.loss_fn(self.model(*inputs[:-1]), inputs[-1])


def _trained_parameters(model):
    """{name in the traced _WithLoss: parameter} of what the optimizer
    trains: the model's parameters that require grad."""
    return dict(("model." + n, p) for n, p in model.named_parameters()
                if p.requires_grad)


def _optimizer_spec(optimizer, model):
    """ein-autodiff's optimizer option for a torch.optim optimizer over
    `model`'s parameters, and its kind; raises naming what is refused."""
    kind = {torch.optim.SGD: "sgd", torch.optim.AdamW: "adamw"}.get(
        type(optimizer))
    if kind is None:
        raise TypeError("optimizer must be a torch.optim.SGD or "
                        "torch.optim.AdamW, not %s"
                        % type(optimizer).__name__)
    if len(optimizer.param_groups) != 1:
        raise ValueError("optimizer has %d parameter groups; one is "
                         "supported" % len(optimizer.param_groups))
    group = optimizer.param_groups[0]
    mine = {id(p) for p in group["params"]}
    theirs = {id(p) for p in model.parameters() if p.requires_grad}
    if mine != theirs:
        raise ValueError("optimizer must hold exactly the model's parameters "
                         "that require grad (it holds %d, the model has %d)"
                         % (len(mine), len(theirs)))
    for flag in ("maximize", "amsgrad", "differentiable"):
        if group.get(flag):
            raise ValueError("optimizer: %s=True is not supported" % flag)
    if kind == "sgd":
        if group.get("dampening", 0) != 0:
            raise ValueError("optimizer: SGD's dampening must be 0, got %r"
                             % group["dampening"])
        spec = "sgd:momentum=%r,nesterov=%d,weight_decay=%r" % (
            float(group["momentum"]), int(bool(group["nesterov"])),
            float(group["weight_decay"]))
    else:
        beta1, beta2 = group["betas"]
        spec = "adamw:beta1=%r,beta2=%r,eps=%r,weight_decay=%r" % (
            float(beta1), float(beta2), float(group["eps"]),
            float(group["weight_decay"]))
    return kind, spec


def compile_training(model, loss_fn, example_inputs, *, optimizer, devices=1,
                     target="cpu", workdir=None, **options):
    """One training step of `model` under `loss_fn` and `optimizer`,
    compiled for `devices` (ein-compile's flags as compile() takes them in
    `options`). `example_inputs` are the model's inputs followed by the
    target `loss_fn` compares its output with; `loss_fn` is a criterion as
    PyTorch users write it (nn.MSELoss(), nn.CrossEntropyLoss(), or any
    function of (output, target) returning a scalar). `optimizer` is a
    torch.optim.SGD (dampening 0) or AdamW over the model's parameters;
    its hyper-parameters are read now, its learning rate at every step (a
    scheduler may change it), its state (a resumed run's) when the trainer
    starts. Returns a Trainer."""
    from . import (_check_compile_arguments, _copy_description,
                   _run_ein_compile)
    from . import compile as _compile
    if not isinstance(model, torch.nn.Module):
        raise TypeError("model must be an nn.Module, not %s"
                        % type(model).__name__)
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable (a criterion), not %s"
                        % type(loss_fn).__name__)
    if isinstance(loss_fn, torch.nn.Module) and \
            any(True for _ in loss_fn.parameters()):
        raise ValueError("loss_fn has parameters of its own; a criterion "
                         "without trained parameters is supported")
    if not isinstance(example_inputs, (tuple, list)) or \
            len(example_inputs) < 2:
        raise TypeError("example_inputs must be a tuple of the model's "
                        "inputs followed by the target")
    for module in model.modules():
        if module.training and isinstance(module, (
                torch.nn.Dropout, torch.nn.modules.batchnorm._BatchNorm)):
            raise ValueError(
                "the model's %s is in training mode: dropout and batch "
                "statistics in training are not supported yet; call "
                "model.eval() (the step then trains with them as in eval)"
                % type(module).__name__)
    defaults = {k: p.default for k, p in
                inspect.signature(_compile).parameters.items()
                if p.default is not inspect.Parameter.empty}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError("compile_training() got unknown keyword(s) %s"
                        % ", ".join(unknown))
    keywords = dict(defaults, devices=devices, target=target,
                    workdir=workdir, **options)
    checked = _check_compile_arguments(keywords)
    kind, spec = _optimizer_spec(optimizer, model)

    wrapper = _WithLoss(model, loss_fn)
    parameters = _trained_parameters(model)
    modes = [(m, m.training) for m in wrapper.modules()]
    wrapper.eval()  # traced as a forward pass; nothing in it depends on mode
    try:
        # Only the trained parameters are {ein.weight}, which the optimizer
        # updates: buffers and constants are read, not trained.
        exported = _export.export(wrapper, tuple(example_inputs),
                                  marked=lambda a: a["name"] in parameters)
    finally:
        for module, training in modes:
            module.training = training
    trained = [a["name"] for a in exported.arguments
               if a["kind"] == "weight" and a["name"] in parameters]

    scratch = None
    directory = checked["workdir"]
    if directory is None:
        directory = scratch = tempfile.mkdtemp(prefix="einsummable-train-")
    try:
        os.makedirs(directory, exist_ok=True)
        mlir = os.path.join(directory, "model.mlir")
        exported.write(mlir, os.path.join(directory, "frontend.json"))
        bundle = os.path.join(directory, "bundle")
        flags = ("devices", "target", "strategy", "memory_limit",
                 "extra_args", "workdir")
        _run_ein_compile(
            mlir, bundle, os.path.join(directory, "explain.json"),
            devices=checked["devices"], target=checked["target"],
            strategy=checked["strategy"],
            memory_limit=checked["memory_limit"],
            extra_args=list(checked["extra_args"]) + ["--optimizer=" + spec],
            given={k: v for k, v in checked.items() if k not in flags})
        # What load_training needs to bind the bundle on another machine:
        # the arguments (and constants' bytes) and the compiled optimizer.
        description = exported.description()
        _copy_description(description, directory, bundle)
        _export._write_text(
            os.path.join(bundle, _TRAINING),
            json.dumps({"optimizer": spec, "trained": trained}, indent=2) +
            "\n")
        weights = {i: a["tensor"] for i, a in enumerate(exported.arguments)
                   if a["kind"] == "weight"}
        trainer = Trainer(bundle, description["arguments"], weights,
                          parameters, trained, optimizer, kind)
    except BaseException:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    trainer._scratch = scratch
    return trainer


# The file in a training bundle that says what compile_training compiled.
_TRAINING = "training.json"


def load_training(bundle, model, loss_fn, *, optimizer):
    """The Trainer of a step compile_training compiled elsewhere: `bundle`
    is its workdir's `bundle` directory (compiled, say, for target="cuda"
    on a machine without the GPU: the bundle loads at the first step, so
    compiling there works), `model` and
    `loss_fn` the ones it traced (their parameters and buffers are bound by
    name) and `optimizer` one of the same class and hyper-parameters over
    `model`'s parameters (its learning rate is read at every step, its
    state when the trainer starts). A bundle that is not a training step's
    raises FrontendError; an optimizer other than the compiled one
    ValueError naming both."""
    from . import _path, _weights_for
    bundle = _path("bundle", bundle)
    if not isinstance(model, torch.nn.Module):
        raise TypeError("model must be an nn.Module, not %s"
                        % type(model).__name__)
    if not os.path.isdir(bundle):
        raise FileNotFoundError("bundle: %s is not a directory (the bundle "
                                "compile_training wrote)" % bundle)
    try:
        with open(os.path.join(bundle, _TRAINING)) as f:
            compiled = json.load(f)
    except FileNotFoundError:
        raise FrontendError("%s has no %s: it is not a training step "
                            "compile_training wrote" % (bundle, _TRAINING))
    except ValueError as error:
        raise FrontendError("%s/%s is not valid JSON: %s"
                            % (bundle, _TRAINING, error))
    kind, spec = _optimizer_spec(optimizer, model)
    if spec != compiled.get("optimizer"):
        raise ValueError("optimizer: the bundle was compiled for %s, this "
                         "optimizer is %s" % (compiled.get("optimizer"), spec))
    description = _export.read_description(
        os.path.join(bundle, "frontend.json"))
    wrapper = _WithLoss(model, loss_fn)
    weights = _weights_for(description, wrapper, bundle)
    parameters = _trained_parameters(model)
    trained = compiled.get("trained", [])
    if sorted(trained) != sorted(parameters):
        raise FrontendError("the bundle trains %d parameters, the model has "
                            "%d that require grad" % (len(trained),
                                                      len(parameters)))
    return Trainer(bundle, description["arguments"], weights, parameters,
                   trained, optimizer, kind)


class Trainer:
    """Runs compiled training steps. `step(*inputs, target)` returns the
    loss; `sync()` writes the weights into the model's parameters and the
    state into the optimizer's (state_dict() then holds them); `close()`
    frees the bundle. Steps of one trainer run one at a time. The bundle is
    loaded at the first step (so a step compiled for a GPU this machine
    lacks can be built here and bound there with load_training)."""

    def __init__(self, bundle, args, weights, parameters, trained, optimizer,
                 kind):
        self._lock = threading.RLock()
        self._scratch = None
        self.bundle = bundle
        self._optimizer = optimizer
        self._kind = kind
        self._parameters = parameters
        self._inputs = [i for i, a in enumerate(args) if a["kind"] == "input"]
        self._trained = [i for i, a in enumerate(args)
                         if a["name"] in trained]
        self._runtime = None
        self._closed = False
        states = _STATE[kind] if kind == "adamw" or \
            optimizer.param_groups[0]["momentum"] else ()
        self._lr = len(args)
        self._count = len(args) + 1 if kind == "adamw" else None
        first = len(args) + (2 if kind == "adamw" else 1)
        # (argument index, parameter, state name) of each state input.
        self._state = []
        for k, i in enumerate(self._trained):
            for j, name in enumerate(states):
                self._state.append((first + k * len(states) + j,
                                    parameters[args[i]["name"]], name))
        self._expected = first + len(self._state)
        # Output 1 + k is the next value of input updated[k].
        self._updated = self._trained + [i for i, _, _ in self._state]
        self._args = args
        # The weights and the state, bound at the first step: host copies
        # of what the bundle's inputs hold until the first step updates
        # them.
        self._values = {}
        for i, a in enumerate(args):
            if a["kind"] == "weight":
                self._values[i] = weights[i]
        self._steps = 0
        for index, p, name in self._state:
            saved = optimizer.state.get(p, {})
            value = saved.get(name)
            self._values[index] = value if value is not None \
                else torch.zeros(p.shape, dtype=torch.float32)
            if "step" in saved:
                self._steps = int(float(saved["step"]))

    def _open(self):
        """The loaded bundle, its weights and state bound (at the first
        use). Call it holding self._lock."""
        if self._closed:
            raise RuntimeError("this trainer is closed")
        if self._runtime is not None:
            return self._runtime
        self._runtime = _runtime.Bundle(self.bundle)
        expected = self._expected
        if len(self._runtime.inputs) != expected:
            raise FrontendError("the step's bundle has %d inputs; %d were "
                                "expected" % (len(self._runtime.inputs),
                                              expected))
        carried = [o.updates for o in self._runtime.outputs[1:]]
        if carried != self._updated:
            raise FrontendError("the step's bundle updates inputs %s; %s "
                                "were expected" % (carried, self._updated))
        for index in list(self._values):
            self._values[index] = self._put(index, self._values[index])
        return self._runtime

    def _put(self, index, tensor):
        t = tensor.detach().cpu().contiguous()
        info = self._runtime.inputs[index]
        if list(t.shape) != list(info.shape):
            raise ValueError("argument %d has shape %s; the step takes %s"
                             % (index, list(t.shape), list(info.shape)))
        t = t.to(_dtype(info.dtype))
        self._runtime.set_input(index, t.data_ptr(),
                                t.numel() * t.element_size())
        return t

    def step(self, *inputs):
        """One step on `inputs` (the model's inputs, then the target):
        forward, gradients and the optimizer's update. Returns the loss
        (a 0-d tensor)."""
        if len(inputs) != len(self._inputs):
            raise TypeError("step() takes the model's inputs and the target "
                            "(%d tensors), got %d" % (len(self._inputs),
                                                      len(inputs)))
        with self._lock:
            self._open()
            for index, x in zip(self._inputs, inputs):
                if not isinstance(x, torch.Tensor):
                    raise TypeError("input %d is a %s, not a tensor"
                                    % (index, type(x).__name__))
                self._put(index, x)
            self._put(self._lr, torch.tensor(
                float(self._optimizer.param_groups[0]["lr"])))
            if self._count is not None:
                self._put(self._count, torch.tensor(float(self._steps + 1)))
            self._runtime.run()
            loss = self._output(0)
            # The updated weights and state become the next step's inputs
            # on the devices; the host copies are stale from here on.
            self._runtime.carry()
            self._values = None
            self._steps += 1
            return loss.reshape(())

    def _output(self, k):
        info = self._runtime.outputs[k]
        out = torch.empty(info.shape, dtype=_dtype(info.dtype))
        self._runtime.get_output(k, out.data_ptr(), info.bytes)
        return out

    def _current(self):
        """Input index -> the value the next step reads: the last step's
        outputs (which it carried), or the host copies before any step."""
        if self._values is not None:
            return self._values
        return {index: self._output(1 + k)
                for k, index in enumerate(self._updated)}

    def sync(self):
        """Writes the trained weights into the model's parameters and the
        optimizer's state (momentum buffers; AdamW's moments and step) into
        the optimizer."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this trainer is closed")
            values = self._current()
            for i in self._trained:
                p = self._parameters[self._args[i]["name"]]
                with torch.no_grad():
                    p.copy_(values[i].to(p.dtype))
            for index, p, name in self._state:
                state = self._optimizer.state[p]
                state[name] = values[index].clone().to(p.dtype)
                if self._kind == "adamw":
                    state["step"] = torch.tensor(float(self._steps))

    def close(self):
        with self._lock:
            self._closed = True
            if self._runtime is not None:
                self._runtime.close()
            if self._scratch:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
