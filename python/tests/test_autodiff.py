"""ein-autodiff against torch.autograd and finite differences: a module that returns a scalar loss
is exported by the front end, imported, differentiated by `ein-autodiff`
and evaluated by ein-eval (the reference evaluator, in float64); the loss
and the gradient of every weight must match torch.autograd's, computed in
float64 on the same f32 values (relative error <= 1e-4 of the gradient's
largest entry). Covers every derivative rule of a join region, sum and
max aggregations (ties shared as torch.amax shares them), the front end's
LLaMA and GPT-2 blocks and a causal LM (python/tests/models.py), weights used
twice, reshape, slice and concat, and an embedding (ein.gather, whose
adjoint is a scatter-add) tied to a language model's head under
cross-entropy; and the same gradients compiled by `ein-compile
--gradients` for the CPU target at 1 to 4 devices and run by ein-run
(f32 kernels: relative error <= 1e-4). Every case is also checked
against central finite differences of the loss in float64 by ein-eval."""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import einsummable  # noqa: E402
import models  # noqa: E402
from einsummable import _tools  # noqa: E402

TOLERANCE = 1e-4


def _run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError("%s: %s" % (" ".join(command), done.stderr))


def ein_gradients(module, inputs, devices=None):
    """(loss, [(weight name, gradient)]) as ein computes them: by ein-eval
    on the differentiated logical program, or (`devices` given) compiled
    with `ein-compile --gradients` for the CPU target over that many
    devices and run by ein-run."""
    exported = einsummable.export(module, inputs)
    weights = [a for a in exported.arguments if a["kind"] == "weight"
               and not a.get("constant")]
    marked = [a for a in exported.arguments if a["kind"] == "weight"]
    with tempfile.TemporaryDirectory() as work:
        mlir = os.path.join(work, "model.mlir")
        exported.write(mlir, os.path.join(work, "frontend.json"))
        paths = []
        for i, a in enumerate(exported.arguments):
            paths.append(os.path.join(work, "in%d.npy" % i))
            np.save(paths[-1], a["tensor"].detach().numpy())
        outputs = [os.path.join(work, "out%d.npy" % i)
                   for i in range(1 + len(marked))]
        io = ["--inputs=" + ",".join(paths), "--outputs=" + ",".join(outputs)]
        if devices is None:
            program = os.path.join(work, "program.json")
            _run([_tools.tool("ein-opt"), mlir, "--ein-import",
                  "--ein-autodiff", "--ein-export-program=file=" + program,
                  "-o", os.devnull])
            _run([_tools.tool("ein-eval"), program] + io)
        else:
            bundle = os.path.join(work, "bundle")
            _run([_tools.tool("ein-compile"), mlir, "-o", bundle,
                  "--gradients", "--target=cpu", "--devices=%d" % devices])
            _run([_tools.tool("ein-run"), bundle] + io)
        values = [np.load(p) for p in outputs]
    by_name = {a["name"]: v for a, v in zip(marked, values[1:])}
    # Parameters only: buffers (masks, RoPE tables) are weights the
    # program reads, not what a user trains.
    parameters = dict(module.named_parameters())
    return float(values[0].reshape(())), \
        [(a["name"], by_name[a["name"]]) for a in weights
         if a["name"] in parameters]


def finite_difference_error(module, inputs, step=1e-5, seed=0):
    """ein's gradients against central finite differences, all in float64
    through ein-eval: the module in f64 is exported twice, as its loss and
    as loss-with-gradients; along a random direction v of the weights,
    (L(w + h v) - L(w - h v)) / 2h must equal sum(grad . v). Returns the
    relative difference."""
    module = _double(module).eval()
    inputs = [x.double() if x.is_floating_point() else x for x in inputs]
    _, gradients = ein_gradients(module, inputs)
    exported = einsummable.export(module, inputs)
    generator = torch.Generator().manual_seed(seed)
    # Along the parameters only: buffers (batch norm's statistics, masks)
    # are read, and their gradients are not what ein_gradients returns.
    parameters = dict(module.named_parameters())
    directions = {}
    for a in exported.arguments:
        if a["kind"] == "weight" and a["name"] in parameters:
            directions[a["name"]] = torch.randn(a["tensor"].shape,
                                                dtype=torch.float64,
                                                generator=generator)
    predicted = sum(float((torch.from_numpy(g) * directions[name]).sum())
                    for name, g in gradients)
    losses = []
    with tempfile.TemporaryDirectory() as work:
        mlir = os.path.join(work, "model.mlir")
        exported.write(mlir, os.path.join(work, "frontend.json"))
        program = os.path.join(work, "program.json")
        _run([_tools.tool("ein-opt"), mlir, "--ein-import",
              "--ein-export-program=file=" + program, "-o", os.devnull])
        for sign in (1, -1):
            paths = []
            for i, a in enumerate(exported.arguments):
                value = a["tensor"].detach()
                if a["name"] in directions:
                    value = value + sign * step * directions[a["name"]]
                paths.append(os.path.join(work, "in%d.npy" % i))
                np.save(paths[-1], value.numpy())
            out = os.path.join(work, "loss.npy")
            _run([_tools.tool("ein-eval"), program,
                  "--inputs=" + ",".join(paths), "--outputs=" + out])
            losses.append(float(np.load(out).reshape(())))
    measured = (losses[0] - losses[1]) / (2 * step)
    return abs(measured - predicted) / max(1.0, abs(predicted))


def ein_training(module, batches, optimizer, lrs, devices=None):
    """The losses and final weights of len(batches) training steps as ein
    runs them: the module's loss with `ein-autodiff="optimizer=..."`
    evaluated by ein-eval (or compiled with `ein-compile --optimizer` for
    the CPU target at `devices` and run by ein-run), each step's updated
    weights and state (the results marked ein.updates) fed to the next,
    the state zeros at first, the learning rate lrs[step] and AdamW's step
    count step + 1 given as arguments."""
    exported = einsummable.export(module, batches[0])
    names = [a["name"] for a in exported.arguments]
    values = [a["tensor"].detach().numpy() for a in exported.arguments]
    weights = [i for i, a in enumerate(exported.arguments)
               if a["kind"] == "weight"]
    adamw = optimizer.startswith("adamw")
    momentum = "momentum=" in optimizer
    # The arguments the step appends: lr, AdamW's step, then each
    # weight's state; the results: the loss, the weights, the state.
    states = (2 if adamw else 1 if momentum else 0) * len(weights)
    first_state = len(values) + (2 if adamw else 1)
    values += [np.float32(0)] * (first_state - len(values))
    for i in weights:
        for _ in range(states // len(weights)):
            values.append(np.zeros(values[i].shape, np.float32))
    losses = []
    with tempfile.TemporaryDirectory() as work:
        mlir = os.path.join(work, "model.mlir")
        exported.write(mlir, os.path.join(work, "frontend.json"))
        if devices is None:
            runner = os.path.join(work, "program.json")
            _run([_tools.tool("ein-opt"), mlir, "--ein-import",
                  "--ein-autodiff=optimizer=" + optimizer,
                  "--ein-export-program=file=" + runner, "-o", os.devnull])
            tool = "ein-eval"
        else:
            runner = os.path.join(work, "bundle")
            _run([_tools.tool("ein-compile"), mlir, "-o", runner,
                  "--optimizer=" + optimizer, "--target=cpu",
                  "--devices=%d" % devices])
            tool = "ein-run"
        for step, batch in enumerate(batches):
            for k, x in enumerate(batch):
                values[k] = x.numpy()
            values[len(names)] = np.array(lrs[step], np.float32)
            if adamw:
                values[len(names) + 1] = np.array(step + 1, np.float32)
            paths = []
            for k, value in enumerate(values):
                paths.append(os.path.join(work, "in%d.npy" % k))
                np.save(paths[-1], np.asarray(value))
            outputs = [os.path.join(work, "out%d.npy" % k)
                       for k in range(1 + len(weights) + states)]
            _run([_tools.tool(tool), runner, "--inputs=" + ",".join(paths),
                  "--outputs=" + ",".join(outputs)])
            results = [np.load(p) for p in outputs]
            losses.append(float(results[0].reshape(())))
            for i, value in zip(weights, results[1:1 + len(weights)]):
                values[i] = value
            for k, value in enumerate(results[1 + len(weights):]):
                values[first_state + k] = value
    return losses, {names[i]: values[i] for i in weights}


def torch_training(module, batches, make_optimizer, lrs):
    """The same steps by torch.optim, in float64."""
    module64 = _double(module)
    optimizer = make_optimizer(module64.parameters())
    losses = []
    for step, batch in enumerate(batches):
        for group in optimizer.param_groups:
            group["lr"] = lrs[step]
        optimizer.zero_grad()
        loss = module64(*[x.double() if x.is_floating_point() else x
                          for x in batch])
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses, {n: p.detach().numpy()
                    for n, p in module64.named_parameters()}


def torch_gradients(module, inputs):
    """The loss and each parameter's gradient by torch.autograd, in
    float64 on the module's own (f32) values."""
    module64 = _double(module)
    loss = module64(*[x.double() if x.is_floating_point() else x
                      for x in inputs])
    loss.backward()
    return float(loss), dict((name, p.grad.numpy())
                             for name, p in module64.named_parameters())


def _double(module):
    import copy
    copied = copy.deepcopy(module).double()
    for p in copied.parameters():
        p.requires_grad_(True)
    return copied


class AutodiffTest(unittest.TestCase):
    def check(self, module, *inputs, devices=None):
        module = module.eval()
        loss, gradients = ein_gradients(module, inputs, devices)
        want_loss, want = torch_gradients(module, inputs)
        self.assertAlmostEqual(loss, want_loss,
                               delta=TOLERANCE * max(1, abs(want_loss)))
        self.assertEqual(sorted(n for n, _ in gradients), sorted(want))
        for name, got in gradients:
            reference = want[name]
            self.assertEqual(got.shape, reference.shape, name)
            scale = max(1e-6, float(np.abs(reference).max()))
            error = float(np.abs(got - reference).max()) / scale
            self.assertLessEqual(error, TOLERANCE,
                                 "%s: %.3g (largest %.3g)" % (name, error,
                                                              scale))

    def test_mlp_mse(self):
        torch.manual_seed(0)
        self.check(WithLoss(nn.Sequential(nn.Linear(8, 16), nn.GELU(),
                                          nn.Linear(16, 4)), nn.MSELoss()),
                   torch.randn(5, 8), torch.randn(5, 4))

    def test_norm_softmax(self):
        # LayerNorm and softmax as the importer writes them (means,
        # variances, a max reduction), before composites are fused.
        torch.manual_seed(1)
        self.check(NormSoftmax(), torch.randn(3, 6, 16), torch.randn(3, 6, 8))

    def test_every_region_rule(self):
        torch.manual_seed(2)
        for name, fn in REGION_RULES:
            with self.subTest(rule=name):
                self.check(Elementwise(fn), torch.randn(4, 6),
                           torch.randn(4, 6))

    def test_max_shares_ties(self):
        # Rows with tied maxima: torch.amax gives each tie an equal share.
        self.check(Amax(torch.tensor([[1.0, 3.0, 3.0, -1.0],
                                      [2.0, 2.0, 2.0, 0.5],
                                      [0.0, -4.0, 5.0, 1.0]])))

    def test_tiny_lm_cross_entropy(self):
        # An embedding (ein.gather: its adjoint a scatter-add) tied to the
        # output projection, cross-entropy with an ignored index.
        torch.manual_seed(4)
        ids = torch.randint(0, 11, (2, 5))
        target = torch.randint(0, 11, (2, 5))
        target[0, :2] = 0
        self.check(tiny_lm(), ids, target.reshape(-1))

    def test_finite_differences(self):
        # Every rule once more, against finite differences in float64
        # (away from ties, where max has no derivative to check).
        torch.manual_seed(6)
        cases = [(name, Elementwise(fn), (torch.randn(4, 6),
                                          torch.randn(4, 6)))
                 for name, fn in REGION_RULES]
        cases += [
            ("mlp", WithLoss(nn.Sequential(nn.Linear(8, 16), nn.GELU(),
                                           nn.Linear(16, 4)), nn.MSELoss()),
             (torch.randn(5, 8), torch.randn(5, 4))),
            ("norm-softmax", NormSoftmax(), (torch.randn(3, 6, 16),
                                             torch.randn(3, 6, 8))),
            ("layout", Layout(), (torch.randn(4, 8),)),
            ("lm", tiny_lm(), (torch.randint(0, 11, (2, 5)),
                              torch.randint(0, 11, (10,)))),
        ]
        for name, module, inputs in cases:
            with self.subTest(case=name):
                self.assertLessEqual(
                    finite_difference_error(module, inputs), 1e-6)

    def check_training(self, module, batches, optimizer, make_optimizer,
                       devices=None):
        module = module.eval()
        lrs = [0.05, 0.04, 0.03, 0.02, 0.01][:len(batches)]
        losses, weights = ein_training(module, batches, optimizer, lrs,
                                       devices)
        want_losses, want = torch_training(module, batches, make_optimizer,
                                           lrs)
        for step, (got, expected) in enumerate(zip(losses, want_losses)):
            self.assertAlmostEqual(got, expected,
                                   delta=TOLERANCE * max(1, abs(expected)),
                                   msg="loss at step %d" % step)
        self.assertEqual(sorted(weights), sorted(want))
        for name, got in weights.items():
            scale = max(1e-6, float(np.abs(want[name]).max()))
            error = float(np.abs(got - want[name]).max()) / scale
            self.assertLessEqual(error, TOLERANCE, name)

    def test_five_steps_against_torch_optim(self):
        # Five steps on new data each, the learning rate changed every
        # step (a schedule): the losses and final weights as torch.optim's.
        torch.manual_seed(7)
        mlp = WithLoss(nn.Sequential(nn.Linear(8, 16), nn.GELU(),
                                     nn.Linear(16, 4)), nn.MSELoss())
        batches = [(torch.randn(6, 8), torch.randn(6, 4)) for _ in range(5)]
        cases = [
            ("sgd", "sgd",
             lambda p: torch.optim.SGD(p, lr=0.05)),
            ("sgd-momentum", "sgd:momentum=0.9,weight_decay=0.01",
             lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9,
                                       weight_decay=0.01)),
            ("sgd-nesterov", "sgd:momentum=0.8,nesterov=1",
             lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8,
                                       nesterov=True)),
            ("adamw", "adamw",
             lambda p: torch.optim.AdamW(p, lr=0.05)),
            ("adamw-betas", "adamw:beta1=0.8,beta2=0.95,eps=1e-6,"
             "weight_decay=0.1",
             lambda p: torch.optim.AdamW(p, lr=0.05, betas=(0.8, 0.95),
                                         eps=1e-6, weight_decay=0.1)),
        ]
        for name, spec, make in cases:
            with self.subTest(optimizer=name):
                self.check_training(mlp, batches, spec, make)
        # Clipping to a global norm first, as clip_grad_norm_ does.
        def clipped(p):
            params = list(p)
            inner = torch.optim.SGD(params, lr=0.05, momentum=0.9)
            step = inner.step

            def clipped_step():
                torch.nn.utils.clip_grad_norm_(params, 0.5)
                step()
            inner.step = clipped_step
            return inner
        with self.subTest(optimizer="sgd-clipped"):
            self.check_training(mlp, batches,
                                "sgd:momentum=0.9,max_grad_norm=0.5", clipped)
        # The tiny language model under AdamW, compiled at 3 devices.
        lm_batches = [(torch.randint(1, 11, (2, 6)),
                       torch.randint(0, 11, (12,))) for _ in range(3)]
        with self.subTest(optimizer="adamw-lm-3-devices"):
            self.check_training(tiny_lm(), lm_batches,
                                "adamw:weight_decay=0.05",
                                lambda p: torch.optim.AdamW(
                                    p, lr=0.05, weight_decay=0.05),
                                devices=3)

    def test_compiled_at_1_to_4_devices(self):
        # The differentiated program planned and run like any other:
        # ein-compile --gradients for the CPU target's virtual GPUs.
        torch.manual_seed(5)
        cases = [
            ("mlp", WithLoss(nn.Sequential(nn.Linear(8, 16), nn.Tanh(),
                                           nn.Linear(16, 4)), nn.MSELoss()),
             (torch.randn(6, 8), torch.randn(6, 4))),
            ("lm", tiny_lm(), (torch.randint(1, 11, (2, 6)),
                              torch.randint(0, 11, (12,)))),
        ]
        for name, module, inputs in cases:
            for devices in (1, 2, 3, 4):
                with self.subTest(model=name, devices=devices):
                    self.check(module, *inputs, devices=devices)

    def test_transformer_blocks_and_causal_lm(self):
        # The test models of the front end (python/tests/models.py): a
        # LLaMA block (RMSNorm, RoPE, GQA, causal softmax, SwiGLU) with
        # both ways of repeating KV heads, a GPT-2 block (LayerNorm, its
        # mask buffer, tanh GELU) under MSE, and a 2-layer causal LM with
        # tied embeddings under cross-entropy.
        torch.manual_seed(8)
        x, y = torch.randn(2, 16, 64), torch.randn(2, 16, 64)
        ids = torch.randint(0, 64, (2, 16))
        target = torch.randint(0, 64, (2, 16))
        cases = [
            ("llama", WithLoss(models.LlamaBlock(), nn.MSELoss()), (x, y),
             (None,)),
            ("llama-repeat-kv", WithLoss(models.LlamaBlock(repeat="expand"),
                                         nn.MSELoss()), (x, y), (None,)),
            ("gpt2", WithLoss(models.GPT2Block(), nn.MSELoss()), (x, y),
             (None,)),
            ("causal-lm", WithLoss(models.CausalLM(), TokenCrossEntropy()),
             (ids, target), (None,)),
        ]
        for name, module, inputs, placements in cases:
            for devices in placements:
                with self.subTest(model=name, devices=devices):
                    self.check(module, *inputs, devices=devices)

    def test_convolutions_and_pools(self):
        # ein.conv's adjoints are convolutions (the data gradient over the
        # adjoint dilated by the stride with the filter flipped, the filter
        # gradient with batch and channels swapped); a pool is
        # differentiated as the windows it reads. Strides, paddings,
        # dilations, groups (depthwise, grouped, a channel multiplier),
        # max and average pools, batch norm in eval, a residual add.
        torch.manual_seed(9)
        cases = [
            ("small", WithLoss(models.SmallCNN(), nn.MSELoss()),
             (torch.randn(2, 3, 8, 8), torch.randn(2, 10))),
            ("strided", WithLoss(models.StridedCNN(), nn.MSELoss()),
             (torch.randn(2, 3, 13, 11), torch.randn(2, 4, 4, 3))),
            ("grouped", WithLoss(models.GroupedCNN(), nn.MSELoss()),
             (torch.randn(2, 3, 10, 10), torch.randn(2, 6, 5, 5))),
            ("batchnorm", WithLoss(NormedCNN(), nn.CrossEntropyLoss()),
             (torch.randn(4, 3, 12, 12), torch.randint(0, 5, (4,)))),
        ]
        for name, module, inputs in cases:
            with self.subTest(model=name):
                self.check(module, *inputs)
            with self.subTest(model=name, check="finite differences"):
                self.assertLessEqual(
                    finite_difference_error(module.eval(), inputs), 1e-6)
        for devices in (1, 2, 3, 4):
            with self.subTest(model="batchnorm", devices=devices):
                self.check(cases[3][1], *cases[3][2], devices=devices)

    def test_layout_and_shared_weight(self):
        torch.manual_seed(3)
        self.check(Layout(), torch.randn(4, 8))


class WithLoss(nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model, self.loss = model, loss

    def forward(self, x, y):
        return self.loss(self.model(x), y)


class NormedCNN(nn.Module):
    """A ResNet stem in small: conv, batch norm (eval), ReLU, a 3x3/2 max
    pool with padding, a residual block of two 3x3 convolutions with batch
    norm, a strided 1x1 shortcut, a global average pool and a classifier."""

    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1,
                                            bias=False),
                                  nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        self.conv1 = nn.Conv2d(8, 12, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(12)
        self.conv2 = nn.Conv2d(12, 12, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(12)
        self.shortcut = nn.Conv2d(8, 12, 1, stride=2)
        self.fc = nn.Linear(12, classes)
        for bn in (self.stem[1], self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(bn.weight, 0.5, 1.5)
            nn.init.uniform_(bn.bias, -0.2, 0.2)

    def forward(self, x):
        x = self.stem(x)
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


class TokenCrossEntropy(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               target.reshape(-1))


class NormSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.proj = nn.Linear(16, 8)
        with torch.no_grad():  # not the identity LayerNorm starts as
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x, t):
        p = F.softmax(self.proj(self.norm(x)), dim=-1)
        return (p * t).sum() + F.log_softmax(self.proj(x), dim=-1).mean()


class Elementwise(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.w = nn.Parameter(torch.randn(4, 6))
        self.v = nn.Parameter(torch.randn(6))

    def forward(self, x, y):
        return self.fn(x * self.w + self.v, y * self.v).sum()


REGION_RULES = [
    ("add-sub-neg", lambda z, y: z + y - (-z)),
    ("mul-div", lambda z, y: z * y / (1 + z * z)),
    ("exp", lambda z, y: torch.exp(z)),
    ("log-abs", lambda z, y: torch.log(z.abs() + 0.5)),
    ("tanh", lambda z, y: torch.tanh(z)),
    ("erf", lambda z, y: torch.erf(z)),
    ("sqrt", lambda z, y: torch.sqrt(z * z + 1)),
    ("rsqrt", lambda z, y: torch.rsqrt(z * z + 1)),
    ("pow", lambda z, y: z ** 3 + torch.pow(z * z + 1, y)),
    ("maximum-minimum", lambda z, y: torch.maximum(z, y) +
     torch.minimum(z, 2 * y)),
    ("where", lambda z, y: torch.where(z > y, z * y, 3 * z)),
    ("relu-sigmoid-silu", lambda z, y: F.relu(z) * y + torch.sigmoid(z) +
     F.silu(y * z)),
]


class Amax(nn.Module):
    def __init__(self, values):
        super().__init__()
        self.w = nn.Parameter(values.clone())

    def forward(self):
        return (self.w.amax(dim=1) * torch.tensor([1.0, 2.0, 3.0])).sum()


def tiny_lm():
    """models.TiedEmbeddingLM under cross-entropy with an ignored index."""
    return WithLoss(models.TiedEmbeddingLM(),
                    nn.CrossEntropyLoss(ignore_index=0))


class Layout(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        h = x @ self.w
        a, b = h[:, :4], h[:, 4:]
        z = torch.cat([b * a, a], dim=1).reshape(-1, 2)
        return (z @ self.w[:2, :3]).pow(2).sum() + (h @ self.w.t()).sum()


if __name__ == "__main__":
    unittest.main()
