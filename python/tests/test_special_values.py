"""NaN and infinity as PyTorch has them: ReLU (alone and folded into a
gemm's epilogue), maximum and minimum, clamp, hardtanh, where and max
pooling propagate a NaN input (and a NaN weight) and keep infinities where
the module does, on the CPU target at 1 to 4 devices. Compared with the
module itself: the same NaN positions, the same infinities, the finite
values within f32's tolerance."""

import os
import sys
import tempfile
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import einsummable  # noqa: E402

NAN, INF = float("nan"), float("inf")
DEVICES = (1, 2, 3, 4)


class LinearRelu(nn.Module):
    # The ReLU runs in the gemm's epilogue (ein-fuse-gemm-epilogues).
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return F.relu(self.fc(x))


class Elementwise(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


class MaxPool(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2)


def special(shape, seed=0):
    """A tensor of `shape` with NaN, +inf and -inf at a few places."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    flat = x.view(-1)
    flat[1] = NAN
    flat[len(flat) // 2] = INF
    flat[-2] = -INF
    return x


class SpecialValues(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-special-")
        torch.manual_seed(0)

    def tearDown(self):
        self.dir.cleanup()

    def assertSame(self, got, want):
        self.assertEqual(got.shape, want.shape)
        self.assertTrue(torch.equal(torch.isnan(got), torch.isnan(want)),
                        "NaN positions differ:\n%s\n%s" % (got, want))
        self.assertTrue(torch.equal(torch.isinf(got) & (got > 0),
                                    torch.isinf(want) & (want > 0)))
        self.assertTrue(torch.equal(torch.isinf(got) & (got < 0),
                                    torch.isinf(want) & (want < 0)))
        finite = torch.isfinite(want)
        self.assertTrue(torch.allclose(got[finite], want[finite],
                                       rtol=1e-4, atol=1e-4))

    def check(self, name, model, inputs, devices=DEVICES):
        model = model.eval()
        with torch.no_grad():
            want = model(*inputs)
        self.assertTrue(torch.isnan(want).any(), "the case has no NaN")
        for d in devices:
            with self.subTest(model=name, devices=d):
                compiled = einsummable.compile(
                    model, inputs, devices=d,
                    workdir=os.path.join(self.dir.name, "%s-%d" % (name, d)))
                self.assertSame(compiled(*inputs), want)
                compiled.close()

    def test_relu(self):
        self.check("relu", Elementwise(torch.relu), (special((4, 8)),))

    def test_linear_relu_epilogue(self):
        self.check("linear-relu", LinearRelu(), (special((4, 8)),))

    def test_linear_relu_nan_weight(self):
        model = LinearRelu()
        with torch.no_grad():
            model.fc.weight[3, 5] = NAN
        self.check("linear-relu-weight", model, (torch.randn(4, 8),))

    def test_maximum_minimum(self):
        self.check("maximum", Elementwise(torch.maximum),
                   (special((4, 8)), special((4, 8), seed=1)))
        self.check("minimum", Elementwise(torch.minimum),
                   (special((4, 8)), special((4, 8), seed=1)))

    def test_clamp_and_hardtanh(self):
        self.check("clamp", Elementwise(lambda x: x.clamp(-0.5, 0.5)),
                   (special((4, 8)),))
        self.check("hardtanh", Elementwise(F.hardtanh), (special((4, 8)),))

    def test_where(self):
        self.check("where", Elementwise(lambda x: torch.where(x > 0, x, -x)),
                   (special((4, 8)),))

    def test_max_pool(self):
        self.check("maxpool", MaxPool(), (special((2, 3, 8, 8)),))

    def test_reduction_max(self):
        self.check("amax", Elementwise(lambda x: x.amax(dim=-1)),
                   (special((4, 8)),))


if __name__ == "__main__":
    unittest.main()
