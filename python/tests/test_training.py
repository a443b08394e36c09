"""einsummable.compile_training against PyTorch's own training loop: the
same model, criterion and optimizer (SGD with momentum, AdamW) trained for
five steps on the same batches by ein (CPU target, 1 to 4 devices) and by
torch.optim (in float64): the losses of every step and, after sync(), the
model's weights and the optimizer's state_dict() agree (relative 1e-4). A
run synced, rebuilt from the model and the optimizer and continued equals
an uninterrupted one; a scheduler's learning rate reaches every step; what
is not supported is refused naming it."""

import copy
import os
import sys
import unittest
import warnings

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import einsummable  # noqa: E402
import models  # noqa: E402

TOLERANCE = 1e-4


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


class Scaled(nn.Module):
    """A linear layer whose output a buffer scales."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.fc = nn.Linear(8, 4)
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 4))

    def forward(self, x):
        return torch.tanh(self.fc(x)) * self.scale


class CNN(nn.Module):
    """conv-BN-ReLU, a 3x3/2 max pool, a residual pair of convolutions
    with a strided 1x1 shortcut, a global average pool, a classifier."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(6), nn.ReLU(),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        self.conv1 = nn.Conv2d(6, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.shortcut = nn.Conv2d(6, 8, 1, stride=2)
        self.fc = nn.Linear(8, 5)
        self.stem[1].running_mean.uniform_(-0.5, 0.5)
        self.stem[1].running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.stem(x)
        y = self.conv2(torch.relu(self.conv1(x))) + self.shortcut(x)
        return self.fc(torch.relu(y).mean((2, 3)))


def batches(count=5, seed=1):
    torch.manual_seed(seed)
    return [(torch.randn(6, 8), torch.randn(6, 4)) for _ in range(count)]


def reference(model, loss_fn, make_optimizer, data, schedule=None):
    """PyTorch's loop in float64: losses, final weights, optimizer state."""
    model = copy.deepcopy(model).double()
    optimizer = make_optimizer(model.parameters())
    scheduler = schedule(optimizer) if schedule else None
    losses = []
    for batch in data:
        optimizer.zero_grad()
        inputs = [x.double() if x.is_floating_point() else x for x in batch]
        loss = loss_fn(model(*inputs[:-1]), inputs[-1])
        loss.backward()
        optimizer.step()
        if scheduler:
            scheduler.step()
        losses.append(float(loss))
    return losses, model, optimizer


class TrainingTest(unittest.TestCase):
    def assertClose(self, got, want, what):
        got = got.detach().double()
        want = want.detach().double()
        scale = max(1e-6, float(want.abs().max()))
        error = float((got - want).abs().max()) / scale
        self.assertLessEqual(error, TOLERANCE, "%s: %.3g" % (what, error))

    def train(self, model, loss_fn, make_optimizer, data, devices,
              schedule=None, split=None):
        """ein's losses, and the model and optimizer after sync(); with
        `split`, synced after that many steps and continued by a new
        trainer built from them."""
        optimizer = make_optimizer(model.parameters())
        scheduler = schedule(optimizer) if schedule else None
        losses = []
        trainer = einsummable.compile_training(
            model, loss_fn, data[0], optimizer=optimizer, devices=devices)
        try:
            for step, batch in enumerate(data):
                if split is not None and step == split:
                    trainer.sync()
                    trainer.close()
                    trainer = einsummable.compile_training(
                        model, loss_fn, data[0], optimizer=optimizer,
                        devices=devices)
                losses.append(float(trainer.step(*batch)))
                if scheduler:
                    # The trainer, not optimizer.step(), made the step, which
                    # PyTorch's scheduler warns about; the rate is right.
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)
                        scheduler.step()
            trainer.sync()
        finally:
            trainer.close()
        return losses, model, optimizer

    def compare(self, model, loss_fn, make_optimizer, data, devices,
                **kwargs):
        want_losses, want_model, want_optimizer = reference(
            model, loss_fn, make_optimizer, data, kwargs.get("schedule"))
        losses, model, optimizer = self.train(
            model, loss_fn, make_optimizer, data, devices, **kwargs)
        for step, (got, want) in enumerate(zip(losses, want_losses)):
            self.assertAlmostEqual(got, want,
                                   delta=TOLERANCE * max(1, abs(want)),
                                   msg="loss at step %d" % step)
        for (name, p), q in zip(model.named_parameters(),
                                want_model.parameters()):
            self.assertClose(p, q, name)
        for p, q in zip(model.parameters(), want_model.parameters()):
            mine, theirs = optimizer.state[p], want_optimizer.state[q]
            self.assertEqual(sorted(mine), sorted(theirs))
            for key in theirs:
                self.assertClose(torch.as_tensor(mine[key]),
                                 torch.as_tensor(theirs[key]), key)

    def test_sgd_momentum_and_adamw_at_1_to_4_devices(self):
        optimizers = {
            "sgd": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9,
                                             weight_decay=0.01),
            "adamw": lambda p: torch.optim.AdamW(p, lr=0.02,
                                                 weight_decay=0.05),
        }
        for name, make in optimizers.items():
            for devices in (1, 2, 3, 4):
                with self.subTest(optimizer=name, devices=devices):
                    self.compare(mlp(), nn.MSELoss(), make, batches(),
                                 devices)

    def test_language_model_cross_entropy(self):
        torch.manual_seed(3)
        data = [(torch.randint(0, 11, (2, 6)), torch.randint(0, 11, (12,)))
                for _ in range(4)]
        model = models.TiedEmbeddingLM()
        self.compare(model, nn.CrossEntropyLoss(ignore_index=0),
                     lambda p: torch.optim.AdamW(p, lr=0.05), data, 2)

    def test_buffers_are_read_not_trained(self):
        # A buffer (and its place in the program) is an input of the step,
        # not a weight the optimizer updates; the model's buffer stays.
        model = Scaled()
        before = model.scale.clone()
        self.compare(model, nn.MSELoss(),
                     lambda p: torch.optim.AdamW(p, lr=0.05), batches(3), 2)
        self.assertTrue(torch.equal(model.scale, before))

    def test_resumed_equals_uninterrupted(self):
        make = lambda p: torch.optim.AdamW(p, lr=0.02)  # noqa: E731
        data = batches()
        whole = self.train(mlp(), nn.MSELoss(), make, data, 2)
        resumed = self.train(mlp(), nn.MSELoss(), make, data, 2, split=2)
        self.assertEqual(whole[0], resumed[0])
        for p, q in zip(whole[1].parameters(), resumed[1].parameters()):
            self.assertTrue(torch.equal(p, q))

    def test_scheduler_sets_each_steps_rate(self):
        self.compare(mlp(), nn.MSELoss(),
                     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5),
                     batches(), 1,
                     schedule=lambda o: torch.optim.lr_scheduler.StepLR(
                         o, step_size=1, gamma=0.5))

    def test_convolutional_network(self):
        # Convolutions, batch norm in eval, max pooling, a strided shortcut
        # and a global average pool (their adjoints: convolutions and the
        # pools' windows), trained with SGD and momentum.
        torch.manual_seed(3)
        model = CNN().eval()
        data = [(torch.randn(4, 3, 10, 10), torch.randint(0, 5, (4,)))
                for _ in range(3)]
        for devices in (1, 3):
            with self.subTest(devices=devices):
                self.compare(copy.deepcopy(model), nn.CrossEntropyLoss(),
                             lambda p: torch.optim.SGD(p, lr=0.1,
                                                       momentum=0.9),
                             data, devices)

    def test_bf16_model(self):
        # A bf16 model: the weights' gradients sum in f32, the moments are
        # f32, the weights are rounded to bf16 after each update; the
        # losses track PyTorch's in f32 from the same weights to bf16's
        # precision.
        torch.manual_seed(4)
        model = models.CausalLM(vocab=64, d=32, heads=4, layers=1,
                                ctx=16).to(torch.bfloat16).eval()
        data = [(torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)))
                for _ in range(3)]

        def loss_fn(logits, target):
            return nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        make = lambda p: torch.optim.AdamW(p, lr=1e-2)  # noqa: E731
        want, _, _ = reference(model, loss_fn, make, data)
        losses, trained, optimizer = self.train(copy.deepcopy(model),
                                                loss_fn, make, data, 2)
        for step, (got, w) in enumerate(zip(losses, want)):
            self.assertAlmostEqual(got, w, delta=2e-2 * max(1, abs(w)),
                                   msg="loss at step %d" % step)
        self.assertNotEqual(losses[0], losses[-1])
        state = optimizer.state[next(iter(trained.parameters()))]
        self.assertEqual(state["exp_avg"].dtype, torch.bfloat16)

    def test_weights_and_state_stay_on_the_devices(self):
        # After the first step only the batch, the learning rate and the
        # step count cross from the host: the updated weights and moments
        # are carried into the inputs on the devices (Bundle.carry).
        model = mlp()
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
        data = batches(3)
        trainer = einsummable.compile_training(
            model, nn.MSELoss(), data[0], optimizer=optimizer, devices=3)
        try:
            trainer.step(*data[0])
            runtime = trainer._runtime
            updated = [o.updates for o in runtime.outputs[1:]]
            self.assertEqual(len(updated), 3 * 4)  # 4 weights, 2 moments
            set_inputs, carries = [], []
            real_set, real_carry = runtime.set_input, runtime.carry
            runtime.set_input = lambda i, *a: (set_inputs.append(i),
                                               real_set(i, *a))
            runtime.carry = lambda: (carries.append(1), real_carry())
            trainer.step(*data[1])
            trainer.step(*data[2])
            self.assertEqual(len(carries), 2)
            self.assertFalse(set(set_inputs) & set(updated), set_inputs)
            self.assertEqual(len(set_inputs), 2 * 4)  # x, y, lr, step
        finally:
            trainer.close()

    def test_load_training_binds_a_step_compiled_elsewhere(self):
        # compile_training's workdir holds a bundle another machine (the
        # GPU's) binds with load_training; the bundle loads at the first
        # step, so compiling needs no device.
        import tempfile
        model = mlp()
        make = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)  # noqa
        data = batches()
        want_losses, want_model, _ = reference(model, nn.MSELoss(), make,
                                               data)
        with tempfile.TemporaryDirectory() as work:
            built = einsummable.compile_training(
                model, nn.MSELoss(), data[0],
                optimizer=make(model.parameters()), devices=2, workdir=work)
            built.close()
            self.assertIsNone(built._runtime)  # never loaded
            bundle = os.path.join(work, "bundle")
            elsewhere = copy.deepcopy(model)
            optimizer = make(elsewhere.parameters())
            trainer = einsummable.load_training(bundle, elsewhere,
                                                nn.MSELoss(),
                                                optimizer=optimizer)
            try:
                losses = [float(trainer.step(*b)) for b in data]
                trainer.sync()
            finally:
                trainer.close()
            for got, want in zip(losses, want_losses):
                self.assertAlmostEqual(got, want,
                                       delta=TOLERANCE * max(1, abs(want)))
            for p, q in zip(elsewhere.parameters(), want_model.parameters()):
                self.assertClose(p, q, "weight")
            other = copy.deepcopy(model)
            with self.assertRaisesRegex(ValueError, "optimizer: the bundle "
                                        "was compiled for sgd:momentum=0.9"):
                einsummable.load_training(
                    bundle, other, nn.MSELoss(),
                    optimizer=torch.optim.SGD(other.parameters(), lr=0.1,
                                              momentum=0.5))
            with self.assertRaisesRegex(einsummable.FrontendError,
                                        "not a training step"):
                einsummable.load_training(
                    work, other, nn.MSELoss(),
                    optimizer=make(other.parameters()))

    def test_refusals_name_the_argument(self):
        model = mlp()
        data = batches(1)[0]
        with self.assertRaisesRegex(TypeError, "torch.optim.SGD or "
                                    "torch.optim.AdamW, not Adam"):
            einsummable.compile_training(
                model, nn.MSELoss(), data,
                optimizer=torch.optim.Adam(model.parameters()))
        with self.assertRaisesRegex(ValueError, "exactly the model's "
                                    "parameters"):
            einsummable.compile_training(
                model, nn.MSELoss(), data,
                optimizer=torch.optim.SGD(list(model.parameters())[:2],
                                          lr=0.1))
        with self.assertRaisesRegex(ValueError, "dampening must be 0"):
            einsummable.compile_training(
                model, nn.MSELoss(), data,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1,
                                          momentum=0.9, dampening=0.1))
        dropout = nn.Sequential(nn.Linear(8, 4), nn.Dropout(0.5)).train()
        with self.assertRaisesRegex(ValueError, "Dropout is in training "
                                    "mode"):
            einsummable.compile_training(
                dropout, nn.MSELoss(), data,
                optimizer=torch.optim.SGD(dropout.parameters(), lr=0.1))
        with self.assertRaisesRegex(TypeError, "unknown keyword"):
            einsummable.compile_training(
                model, nn.MSELoss(), data, devices=2, colour="red",
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


if __name__ == "__main__":
    unittest.main()
