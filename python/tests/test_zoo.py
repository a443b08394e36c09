"""The models people run, whole (issue 55): torch.nn's own modules
(BatchNorm, MultiheadAttention, TransformerEncoderLayer and
DecoderLayer), torchvision's ResNet-18, a U-Net level, a dense mixture of
experts, a small causal LM, and the ops they and their neighbours use
(constants shaped like a tensor, padding, masks, cumsum, logsumexp,
adaptive pooling, 1-D and transposed convolutions, interpolation, reads
and writes at indices, topk, cross-entropy), each
compiled for the CPU target at 1, 2 and 4 devices and checked against the
PyTorch module itself (f32: 1e-4 of max(1, max|reference|)); and
compile()'s and load()'s arguments, checked as ein-compile checks its
flags, and the temporary directories compile() makes, removed."""

import gc
import os
import sys
import tempfile
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import einsummable  # noqa: E402
import models  # noqa: E402
from test_frontend import error  # noqa: E402

try:
    import torchvision
except ImportError:  # scripts/setup.sh installs python3-torchvision
    torchvision = None

TOLERANCE = 1e-4
DEVICES = (1, 2, 4)


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-zoo-")
        torch.manual_seed(0)

    def tearDown(self):
        self.dir.cleanup()

    def check(self, name, model, inputs, devices=DEVICES):
        """`model` compiled at each device count equals the module's own
        output (each result, for a tuple)."""
        if isinstance(model, nn.Module):
            model = model.eval()
        with torch.no_grad():
            want = model(*inputs)
        for d in devices:
            with self.subTest(model=name, devices=d):
                compiled = einsummable.compile(
                    model, inputs, devices=d,
                    workdir=os.path.join(self.dir.name, "%s-%d" % (name, d)))
                self.assertEqual(compiled.devices, d)
                got = compiled(*inputs)
                pairs = zip(got, want) if isinstance(want, tuple) else [
                    (got, want)]
                for g, w in pairs:
                    self.assertEqual(g.shape, w.shape)
                    self.assertEqual(g.dtype, w.dtype)
                    if w.is_floating_point():
                        self.assertLess(error(g, w), TOLERANCE)
                    else:
                        self.assertTrue(torch.equal(g, w))
                compiled.close()

    def refused(self, model, inputs, op, line):
        """Compiling `model` raises a FrontendError naming `op` and the
        source line `line` ("file.py:N")."""
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(model, inputs, workdir=self.dir.name)
        message = str(caught.exception)
        self.assertIn(op, message)
        self.assertIn(line, message)
        return message


def _randomize_norms(model):
    """Batch norms with running statistics and affine parameters away from
    their initial values (an eval-mode norm of fresh statistics is nearly
    the identity, which would hide a wrong translation); layer norms'
    affine parameters and ConvNeXt's layer scales (1e-6 at first, which
    would make its blocks the identity) likewise."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.normal_(0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.normal_(1, 0.2)
                m.bias.normal_(0, 0.2)
            if isinstance(m, nn.LayerNorm):
                m.weight.normal_(1, 0.2)
                m.bias.normal_(0, 0.2)
            if isinstance(getattr(m, "layer_scale", None), nn.Parameter):
                m.layer_scale.uniform_(0.5, 1.0)
    return model


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.bn(self.conv(x))), 1))


class Constants(nn.Module):
    """Constants shaped like a run-time tensor (their values do not depend
    on it): new_zeros, new_ones, new_full, full_like, zeros_like,
    ones_like."""

    def forward(self, x):
        a = x.new_zeros(x.shape) + x
        b = x.new_ones(x.shape[-1]) * x
        c = x.new_full((1, x.shape[-1]), 0.5)
        d = torch.full_like(x, 2.0) + torch.zeros_like(x)
        return a + b * c + d * torch.ones_like(x), torch.ones_like(x)


class Modules(Case):
    def test_constants_shaped_like_a_tensor(self):
        self.check("constants", Constants(), (torch.randn(2, 3, 5),))

    def test_batch_norm_2d(self):
        self.check("bn2d", _randomize_norms(ConvBN()),
                   (torch.randn(2, 3, 6, 6),))

    def test_batch_norm_1d(self):
        # (N, C) after a linear layer, and (N, C, L).
        flat = _randomize_norms(nn.Sequential(nn.Linear(12, 6),
                                              nn.BatchNorm1d(6), nn.ReLU()))
        self.check("bn1d", flat, (torch.randn(4, 12),))
        self.check("bn1d-ncl", _randomize_norms(nn.BatchNorm1d(5)),
                   (torch.randn(2, 5, 7),))

    @unittest.skipUnless(torchvision, "torchvision is not installed "
                         "(scripts/setup.sh installs python3-torchvision)")
    def test_resnet18(self):
        # torchvision's own ResNet-18 (convolutions, batch norms, max
        # pooling, residual adds, adaptive average pooling, the classifier)
        # on a 32x32 image.
        model = _randomize_norms(torchvision.models.resnet18(num_classes=10))
        self.check("resnet18", model, (torch.randn(1, 3, 32, 32),))

    @unittest.skipUnless(torchvision, "torchvision is not installed "
                         "(scripts/setup.sh installs python3-torchvision)")
    def test_vit_b_16(self):
        # torchvision's ViT-B/16 whole (the patch convolution, the class
        # token, 12 encoder blocks of nn.MultiheadAttention, the head) on a
        # 32x32 image: 4 patches and the class token. Its head starts at
        # zero: drawn again, so the logits are not all the bias.
        torch.manual_seed(0)
        model = torchvision.models.vit_b_16(image_size=32, num_classes=10)
        with torch.no_grad():
            model.heads.head.weight.normal_(0, 0.05)
        self.check("vit_b_16", model, (torch.randn(1, 3, 32, 32),))


@unittest.skipUnless(torchvision, "torchvision is not installed "
                     "(scripts/setup.sh installs python3-torchvision)")
class MobileNets(Case):
    """torchvision's CNNs with depthwise and grouped convolutions (issue
    55), whole, 10 classes, on one 32x32 image at 1, 2 and 4 devices:
    their squeeze-and-excitation (adaptive average pooling to 1, a
    sigmoid or hardsigmoid gate), hardswish, SiLU, ReLU6 and stochastic
    depth in eval, and ConvNeXt's permutes, LayerNorm, layer scale and the
    view PyTorch's functionalization writes as `as_strided`."""

    def check_model(self, name):
        torch.manual_seed(0)
        model = _randomize_norms(getattr(torchvision.models, name)(
            num_classes=10))
        self.check(name, model, (torch.randn(1, 3, 32, 32),))

    def test_mobilenet_v2(self):
        self.check_model("mobilenet_v2")

    def test_mobilenet_v3_small(self):
        self.check_model("mobilenet_v3_small")

    def test_efficientnet_b0(self):
        self.check_model("efficientnet_b0")

    def test_regnet_y_400mf(self):
        self.check_model("regnet_y_400mf")

    def test_convnext_tiny(self):
        self.check_model("convnext_tiny")


class SelfAttention(nn.Module):
    def __init__(self, batch_first=True, need_weights=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=batch_first)
        self.need_weights = need_weights

    def forward(self, x):
        if self.need_weights:
            return self.attn(x, x, x)  # (output, head-averaged weights)
        return self.attn(x, x, x, need_weights=False)[0]


class MaskedSelfAttention(nn.Module):
    """A key padding mask as an input (a float one: 0 kept, -inf hidden;
    a boolean one: True hidden)."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x, mask):
        return self.attn(x, x, x, key_padding_mask=mask,
                         need_weights=False)[0]


class Wrapped(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)  # the line a refusal inside the layer names


class Transformers(Case):
    """PyTorch's fused inference fast paths
    (aten._native_multi_head_attention, aten._transformer_encoder_layer_fwd)
    are kept out of the trace: these modules translate through their
    ordinary ops."""

    def test_multihead_attention(self):
        x = torch.randn(2, 6, 32)
        self.check("mha", SelfAttention(), (x,))
        self.check("mha-out", SelfAttention(need_weights=False), (x,))
        self.check("mha-seq-first", SelfAttention(batch_first=False),
                   (x.transpose(0, 1).contiguous(),))

    def test_multihead_attention_key_padding_mask(self):
        x = torch.randn(2, 6, 32)
        mask = torch.zeros(2, 6)
        mask[1, 4:] = float("-inf")
        self.check("mha-mask", MaskedSelfAttention(), (x, mask))

    def test_transformer_encoder_layer(self):
        x = torch.randn(2, 6, 32)
        self.check("tel", nn.TransformerEncoderLayer(32, 4, 64,
                                                     batch_first=True), (x,))
        self.check("tel-seq-first", nn.TransformerEncoderLayer(32, 4, 64),
                   (x.transpose(0, 1).contiguous(),))
        self.check("tel-pre-norm-gelu", nn.TransformerEncoderLayer(
            32, 4, 64, activation="gelu", norm_first=True, batch_first=True),
            (x,))

    def test_transformer_encoder(self):
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.check("encoder", nn.TransformerEncoder(layer, 2),
                   (torch.randn(2, 6, 32),), devices=(1, 2))

    def test_refusal_inside_a_module_names_op_and_line(self):
        # An op the front end refuses inside PyTorch's own layer: named
        # with the model's line that called the layer, or, for the layer
        # compiled by itself, with the layer's own line in torch.nn.
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True,
                                           activation=F.hardshrink).eval()
        x = torch.randn(2, 6, 32)
        self.refused(Wrapped(layer).eval(), (x,), "aten.hardshrink",
                     "test_zoo.py:%d" % (
                         Wrapped.forward.__code__.co_firstlineno + 1))
        self.refused(layer, (x,), "aten.hardshrink",
                     os.path.join("torch", "nn", "modules", "transformer.py"))

    def test_boolean_key_padding_mask(self):
        # A torch.bool input (True where hidden), as nn.MultiheadAttention
        # takes it: a bundle input of i1, a byte an element.
        x = torch.randn(2, 6, 32)
        mask = torch.zeros(2, 6, dtype=torch.bool)
        mask[1, 4:] = True
        self.check("bool-mask", MaskedSelfAttention(), (x, mask))


class PartialRotary(nn.Module):
    # Phi-3's rotary embedding: the first `rotary` dimensions of each head
    # rotate, the rest pass through; with rotary == head_dim nothing does,
    # and the pass-through slice has no elements.
    def __init__(self, rotary):
        super().__init__()
        self.rotary = rotary

    def forward(self, q):
        rot, rest = q[..., :self.rotary], q[..., self.rotary:]
        half = rot.shape[-1] // 2
        turned = torch.cat((-rot[..., half:], rot[..., :half]), dim=-1)
        return torch.cat((rot * 0.5 + turned, rest), dim=-1)


class Ops(Case):
    def test_zero_size_slices_are_dropped(self):
        # Once a zero-width tensor.extract_slice the parser refused.
        x = torch.randn(2, 4, 6, 32)
        self.check("rotary-whole", PartialRotary(32), (x,))
        self.check("rotary-part", PartialRotary(16), (x,), devices=(2,))

    def test_pad_constant(self):
        x = (torch.randn(2, 3, 5, 6),)
        self.check("pad", lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), x)
        # Negative pads crop.
        self.check("pad-crop", lambda x: F.pad(x, (-1, 2, 1, -2)), x,
                   devices=(2,))

    def test_pad_reflect_replicate_circular(self):
        x = (torch.randn(2, 3, 5, 6),)
        for mode in ("reflect", "replicate", "circular"):
            self.check("pad-" + mode,
                       lambda x, mode=mode: F.pad(x, (1, 2, 3, 1), mode=mode),
                       x)
        self.check("pad-reflect-1d",
                   lambda x: F.pad(x, (2, 3), mode="reflect"),
                   (torch.randn(2, 3, 7),), devices=(2,))

    def test_masked_fill_and_where_with_tensor_conditions(self):
        x, y = torch.randn(4, 8), torch.randn(4, 8)
        ids = torch.randint(0, 3, (4, 8))
        self.check("masked-fill",
                   lambda x, y: x.masked_fill(y > x, torch.tensor(-2.0)),
                   (x, y))
        self.check("where", lambda x, y: torch.where(x > 0, x * y, y - 1),
                   (x, y))
        # A condition from an integer input, broadcast; a scalar branch.
        self.check("where-int", lambda x, i: torch.where(i[:, :1] == 1, x,
                                                         0.0), (x, ids))

    def test_cumsum(self):
        x = torch.randn(3, 7, 5)
        self.check("cumsum", lambda x: torch.cumsum(x, 1), (x,))
        self.check("cumsum-last", lambda x: x.cumsum(-1) * 0.5, (x,),
                   devices=(2,))

    def test_logsumexp(self):
        x = torch.randn(4, 6, 5) * 10
        x[1, 2, :] = float("-inf")  # a row of -inf: -inf, not NaN
        with torch.no_grad():
            want = torch.logsumexp(x, -1)
        self.assertTrue(torch.isinf(want[1, 2]))
        compiled = einsummable.compile(lambda x: torch.logsumexp(x, -1),
                                       (x,), devices=2,
                                       workdir=self.dir.name)
        got = compiled(x)
        self.assertTrue(torch.equal(torch.isinf(got), torch.isinf(want)))
        finite = torch.isfinite(want)
        self.assertLess(error(got[finite], want[finite]), TOLERANCE)
        compiled.close()
        y = torch.randn(4, 6, 5)
        self.check("logsumexp-keepdim",
                   lambda y: torch.logsumexp(y, (0, 2), keepdim=True), (y,))

    def test_as_strided_permutations(self):
        # Dense views of the whole tensor are reshapes and a transpose.
        x = torch.randn(2, 3, 4)
        self.check("as-strided-transpose",
                   lambda x: torch.as_strided(x, (4, 2, 3), (1, 12, 4)) * 2,
                   (x,), devices=(1, 2))
        self.check("as-strided-unit",
                   lambda x: torch.as_strided(x, (2, 1, 12), (12, 5, 1)) + 1,
                   (x,), devices=(1,))
        # Overlapping windows are refused, naming the view.
        message = self.refused(
            lambda x: torch.as_strided(x, (3, 4), (2, 1)) * 2, (x,),
            "as_strided", "test_zoo.py")
        self.assertIn("strides [2, 1]", message)

    def test_embedding_with_padding_idx(self):
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(12, 16, padding_idx=0)
                self.out = nn.Linear(16, 4)

            def forward(self, ids):
                return self.out(self.embed(ids))
        ids = torch.tensor([[0, 3, 11, 0, 5], [7, 0, 0, 1, 2]])
        self.check("embedding-padding", Tagger(), (ids,))

    def test_adaptive_average_pooling(self):
        x = torch.randn(2, 3, 8, 6)
        self.check("adaptive-2x3",
                   lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (x,))
        self.check("adaptive-1",
                   nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()),
                   (x,), devices=(2,))
        self.check("adaptive-1d", lambda x: F.adaptive_avg_pool1d(x, 2),
                   (torch.randn(2, 3, 8),), devices=(2,))

    def test_adaptive_pooling_to_a_size_that_does_not_divide(self):
        def f(x):
            return F.adaptive_avg_pool2d(x, (3, 4))  # the line named
        message = self.refused(f, (torch.randn(2, 3, 8, 6),),
                               "adaptive average pooling",
                               "test_zoo.py:%d"
                               % (f.__code__.co_firstlineno + 1))
        self.assertIn("divide", message)


class Convolutions(Case):
    def test_conv1d(self):
        x = torch.randn(2, 3, 17)
        self.check("conv1d", nn.Conv1d(3, 4, 3, padding=1), (x,))
        self.check("conv1d-strided", nn.Conv1d(3, 4, 5, stride=2, padding=3,
                                               dilation=2, bias=False),
                   (x,), devices=(2,))
        self.check("f-conv1d", lambda x, w: F.conv1d(x, w, stride=2),
                   (x, torch.randn(5, 3, 3)), devices=(2,))

    def test_conv_transpose2d(self):
        x = torch.randn(1, 3, 5, 6)
        self.check("convT", nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1,
                                               output_padding=1), (x,))
        # Uneven strides, dilation, output padding in one dimension; a
        # padding beyond the window's reach (the input cropped).
        self.check("convT-uneven", nn.ConvTranspose2d(
            3, 4, (3, 2), stride=(1, 3), padding=(2, 0), dilation=(2, 1),
            output_padding=(0, 2)), (x,), devices=(2,))
        self.check("convT-crop", nn.ConvTranspose2d(3, 2, 3, stride=2,
                                                    padding=3),
                   (torch.randn(1, 3, 6, 6),), devices=(2,))

    def test_conv_transpose1d(self):
        self.check("convT1d", nn.ConvTranspose1d(3, 4, 3, stride=2),
                   (torch.randn(2, 3, 8),), devices=(1, 2))

    def test_conv3d_is_refused(self):
        class Volume(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv3d(2, 2, 3)

            def forward(self, x):
                return self.conv(x)  # the line named
        message = self.refused(
            Volume().eval(), (torch.randn(1, 2, 4, 4, 4),),
            "aten.convolution", "test_zoo.py:%d"
            % (Volume.forward.__code__.co_firstlineno + 1))
        self.assertIn("3-D", message)


class Interpolation(Case):
    def test_nearest(self):
        x = torch.randn(2, 3, 5, 6)
        self.check("nearest-2x", lambda x: F.interpolate(x, scale_factor=2),
                   (x,))
        self.check("nearest-size",
                   lambda x: F.interpolate(x, size=(7, 9)), (x,),
                   devices=(2,))
        self.check("upsample-2.5", nn.Upsample(scale_factor=2.5), (x,),
                   devices=(2,))
        self.check("nearest-exact", lambda x: F.interpolate(
            x, size=(7, 4), mode="nearest-exact"), (x,), devices=(2,))
        self.check("nearest-1d", lambda x: F.interpolate(x, scale_factor=3),
                   (torch.randn(2, 3, 5),), devices=(2,))

    def test_bilinear(self):
        x = torch.randn(2, 3, 5, 6)
        self.check("bilinear-2x", lambda x: F.interpolate(
            x, scale_factor=2, mode="bilinear"), (x,))
        for align in (False, True):
            self.check("bilinear-size-%s" % align, lambda x, a=align:
                       F.interpolate(x, size=(7, 9), mode="bilinear",
                                     align_corners=a), (x,), devices=(2,))
        self.check("upsample-bilinear-1.7", nn.Upsample(
            scale_factor=1.7, mode="bilinear", align_corners=True), (x,),
            devices=(2,))
        self.check("bilinear-down", lambda x: F.interpolate(
            x, size=(3, 4), mode="bilinear"), (x,), devices=(2,))

    def test_linear_bicubic_trilinear(self):
        self.check("linear-1d", lambda x: F.interpolate(
            x, scale_factor=2, mode="linear"), (torch.randn(2, 3, 5),),
            devices=(2,))
        self.check("bicubic", lambda x: F.interpolate(
            x, size=(7, 9), mode="bicubic"), (torch.randn(1, 2, 5, 6),),
            devices=(2,))
        self.check("trilinear", lambda x: F.interpolate(
            x, scale_factor=2, mode="trilinear"),
            (torch.randn(1, 2, 3, 4, 5),), devices=(2,))

    def test_bf16(self):
        # The contractions run in f32 from a widened copy (a gemm takes
        # operands of one type); the result rounds once, as PyTorch's.
        x = torch.randn(1, 2, 5, 6).to(torch.bfloat16)
        for mode in ("bilinear", "nearest"):
            f = (lambda x, mode=mode: F.interpolate(x, scale_factor=2,
                                                    mode=mode))
            compiled = einsummable.compile(
                f, (x,), devices=2,
                workdir=os.path.join(self.dir.name, "bf16-" + mode))
            got = compiled(x)
            self.assertEqual(got.dtype, torch.bfloat16)
            self.assertLess(error(got, f(x)), 2e-2)
            compiled.close()

    def test_antialiased_and_area(self):
        x = torch.randn(1, 2, 12, 16)
        self.check("antialiased-bilinear", lambda x: F.interpolate(
            x, size=(5, 7), mode="bilinear", antialias=True), (x,),
            devices=(2,))
        self.check("antialiased-bicubic", lambda x: F.interpolate(
            x, scale_factor=0.4, mode="bicubic", antialias=True), (x,),
            devices=(2,))
        self.check("area", lambda x: F.interpolate(x, size=(3, 4),
                                                   mode="area"), (x,),
                   devices=(2,))


class BertEmbeddings(nn.Module):
    """BERT's embeddings as transformers writes them: position and
    token-type ids from integer buffers, the token types gathered at the
    positions."""

    def __init__(self, vocab=30, d=16, ctx=12):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.position = nn.Embedding(ctx, d)
        self.token_type = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d)
        self.register_buffer("position_ids", torch.arange(ctx).expand(1, -1))
        self.register_buffer("token_type_ids",
                             torch.zeros(1, ctx, dtype=torch.long))

    def forward(self, ids):
        b, t = ids.shape
        positions = self.position_ids[:, :t]
        types = torch.gather(self.token_type_ids.expand(b, -1), 1,
                             positions.expand(b, -1))
        return self.norm(self.word(ids) + self.token_type(types)
                         + self.position(positions))


class Indexing(Case):
    def test_gather_and_take_along_dim(self):
        x = torch.randn(2, 3, 5, 6)
        self.check("gather", lambda x, i: torch.gather(x, 3, i),
                   (x, torch.randint(0, 6, (2, 3, 5, 4))))
        # An index smaller than the input in another dimension.
        self.check("gather-1", lambda x, i: torch.gather(x, 1, i),
                   (x, torch.randint(0, 3, (2, 2, 4, 6))), devices=(2,))
        self.check("take-along-dim",
                   lambda x, i: torch.take_along_dim(x, i, 2),
                   (x, torch.randint(0, 5, (1, 3, 2, 1))), devices=(2,))

    def test_index_select_and_advanced_indexing(self):
        x = torch.randn(2, 3, 5, 6)
        self.check("index-select-0", lambda x, i: torch.index_select(x, 0, i),
                   (x, torch.tensor([1, 0, 1])))
        self.check("index-select-2", lambda x, i: torch.index_select(x, 2, i),
                   (x, torch.tensor([4, 0, 1, 1])), devices=(2,))
        # Constant indices: slices where they run, a gather where not.
        self.check("index-runs", lambda x: x[:, [0, 0, 0, 1, 2, 3, 5, 5]],
                   (torch.randn(3, 6),), devices=(2,))
        self.check("index-select-const", lambda x: torch.index_select(
            x, 3, torch.tensor([5, 0, 3, 1, 4, 2])), (x,), devices=(2,))
        self.check("ids", lambda x, i: x[i],
                   (torch.randn(7, 3), torch.randint(0, 7, (2, 4))),
                   devices=(2,))
        self.check("ids-1", lambda x, i, j: x[:, i, j],
                   (torch.randn(7, 5, 3, 2), torch.randint(0, 5, (2, 4)),
                    torch.randint(0, 3, (4,))), devices=(2,))

    def test_bert_embeddings_from_integer_buffers(self):
        self.check("bert-embeddings", BertEmbeddings(),
                   (torch.randint(0, 30, (2, 9)),))

    def test_integers_computed_in_the_model(self):
        # Ids computed in the model (RoBERTa's positions count the tokens
        # that are not padding), integer data read at run-time indices,
        # integers ranked.
        def positions(w, ids):
            mask = ids.ne(1).int()
            pos = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
            return F.embedding(pos, w, padding_idx=1)
        self.check("roberta-positions", positions, (
            torch.randn(12, 4), torch.tensor([[5, 6, 7, 1, 1],
                                              [3, 1, 4, 4, 1]])))
        # Integer data at run-time indices (summed in f64, converted), and
        # integer and boolean results.
        self.check("integer-gather", lambda x, i: (
            torch.gather(x, 1, i), torch.gather(x, 1, i) > 2),
            (torch.randint(0, 5, (3, 4)), torch.randint(0, 4, (3, 2))),
            devices=(2,))
        self.check("ids-from-floats", lambda w, x: F.embedding(
            (x * 3).long().clamp(0, 8), w),
            (torch.randn(9, 3), torch.rand(2, 5) * 3), devices=(2,))
        self.check("computed-ids-sliced", lambda w, i: F.embedding(
            torch.cat([i + 1, i[:, :2]], 1), w),
            (torch.randn(9, 3), torch.randint(0, 7, (2, 3))), devices=(2,))
        self.check("integer-topk", lambda x: torch.topk(x, 2),
                   (torch.randperm(12).reshape(3, 4),), devices=(2,))
        x, i = torch.randn(4, 6), torch.randint(-9, 9, (4, 6))
        j = torch.randint(1, 4, (4, 6)) * torch.tensor([1, -1]).repeat(3)
        self.check("integer-division", lambda x, i, j: x * (
            i // j) + x * (i % j) + x * (i // -3), (x, i, j), devices=(2,))
        self.check("rounding", lambda x: torch.floor(x) + 2 * torch.ceil(x)
                   + 3 * torch.trunc(x) + torch.div(x, 0.7,
                                                    rounding_mode="floor"),
                   (x * 5,), devices=(2,))

    def test_refusals(self):
        def masked(x):
            return x[x > 0]  # the line named
        message = self.refused(masked, (torch.randn(3, 4),), "aten.index",
                               "test_zoo.py:%d"
                               % (masked.__code__.co_firstlineno + 1))
        self.assertIn("boolean mask", message)



class RoutingAndLosses(Case):
    def test_topk(self):
        x = torch.randn(4, 6, 7)
        self.check("topk", lambda x: torch.topk(x, 3), (x,))
        self.check("topk-smallest", lambda x: torch.topk(
            x, 2, dim=1, largest=False), (x,), devices=(2,))

    def test_scatter(self):
        chosen = torch.stack([torch.randperm(6)[:2] for _ in range(4)])
        w = torch.randn(4, 2)
        self.check("scatter-zeros",
                   lambda w, i: torch.zeros(4, 6).scatter(1, i, w),
                   (w, chosen))
        self.check("scatter", lambda x, w, i: x.scatter(1, i, w),
                   (torch.randn(4, 6), w, chosen), devices=(2,))
        self.check("scatter-value", lambda x, i: x.scatter(1, i, 2.5),
                   (torch.randn(4, 6), chosen), devices=(2,))
        # Repeated indices add up.
        self.check("scatter-add", lambda x, w, i: x.scatter_add(0, i, w),
                   (torch.randn(5, 6), torch.randn(3, 4),
                    torch.randint(0, 5, (3, 4))), devices=(2,))

    def test_booleans(self):
        x, y = torch.randn(4, 6), torch.randn(4, 6)
        self.check("logic", lambda x, y: torch.where(
            ((x > 0) & (y > 0)) | ~(x > y), x, y), (x, y))
        self.check("xor", lambda x, y: torch.where(
            torch.logical_xor(x > 0, y > 0), x, y * 2), (x, y), devices=(2,))
        self.check("any", lambda x: torch.where(
            (x > 1).any(-1, keepdim=True), x, -x), (x,), devices=(2,))
        self.check("all", lambda x: (x > -1).all(-1).float(), (x,),
                   devices=(2,))

        def two_readers(x, y):
            keep = x > y
            return torch.where(keep, x, y), torch.where(keep, y, 0.5) * 3
        self.check("two-readers", two_readers, (x, y), devices=(2,))
        self.check("mask-slice-cat-pad", lambda x: torch.where(torch.cat(
            [(x > 0)[:, :3], F.pad(x[:, 3:-1] < 0, (0, 1))], 1), x, 0.0),
            (x,), devices=(2,))
        self.check("mask-constant", lambda x: torch.where(torch.tensor(
            [True, False, True, True, False, True]), x, 0.0), (x,),
            devices=(2,))

        def padding_mask(scores, ids):
            # A key padding mask over heads, flattened with the batch.
            b, h, t, _ = scores.shape
            keep = (ids != 0)[:, None, None, :].expand(b, h, t, t)
            return scores.reshape(b * h, t, t).masked_fill(
                ~keep.reshape(b * h, t, t), -1e9).softmax(-1)
        self.check("padding-mask", padding_mask, (
            torch.randn(2, 3, 5, 5), torch.tensor([[1, 2, 0, 0, 3],
                                                   [4, 0, 1, 1, 1]])))
        # Counting a mask's elements, and positions counted along it.
        ids = torch.randint(0, 3, (4, 6))
        self.check("count", lambda x, i: x * (i != 0).sum(-1, keepdim=True),
                   (x, ids), devices=(2,))
        self.check("positions", lambda x, i: x * (
            (i != 0).long().cumsum(-1) * (i != 0)), (x, ids), devices=(2,))

        def assign(x):
            y = x.clone()
            y[y > 0.5] = 0.0  # index_put with a boolean mask
            return y
        self.check("mask-assign", assign, (x,), devices=(2,))
        self.check("mask-accumulate", lambda x, m: x.index_put(
            (m > 0,), torch.tensor(1.5), accumulate=True),
            (torch.randn(4, 5, 3), torch.randn(4, 5)), devices=(2,))

    def test_cross_entropy(self):
        x, target = torch.randn(6, 7), torch.randint(0, 7, (6,))
        target[2] = -100  # ignored
        self.check("cross-entropy", lambda x, t: F.cross_entropy(x, t),
                   (x, target))
        self.check("cross-entropy-weighted-sum", lambda x, t, w:
                   F.cross_entropy(x, t, weight=w, reduction="sum"),
                   (x, target, torch.rand(7)), devices=(2,))
        self.check("cross-entropy-none", lambda x, t: F.cross_entropy(
            x, t, reduction="none", ignore_index=3),
            (x, torch.randint(0, 7, (6,))), devices=(2,))
        self.check("cross-entropy-2d", lambda x, t: F.cross_entropy(x, t),
                   (torch.randn(2, 5, 3, 4), torch.randint(0, 5, (2, 3, 4))),
                   devices=(2,))
        self.check("nll-weighted-mean", lambda x, t, w: F.nll_loss(
            F.log_softmax(x, -1), t, weight=w), (x, target, torch.rand(7)),
            devices=(2,))


class WholeModels(Case):
    def test_unet_block(self):
        self.check("unet", _randomize_norms(models.UNetBlock()),
                   (torch.randn(1, 3, 11, 14),))

    def test_dense_moe(self):
        x = torch.randn(2, 5, 16)
        self.check("moe", models.DenseMoE(), (x,))
        self.check("moe-scatter", models.DenseMoE(scatter=True), (x,),
                   devices=(2,))

    def test_encoder_decoder(self):
        src, tgt = torch.randint(0, 20, (2, 7)), torch.randint(0, 20, (2, 5))
        self.check("encoder-decoder", models.EncoderDecoder(), (src, tgt))
        self.check("encoder-decoder-bool-mask",
                   models.EncoderDecoder(bool_mask=True), (src, tgt),
                   devices=(2,))

    def test_causal_lm(self):
        ids = torch.randint(0, 64, (2, 12))
        self.check("causal-lm", models.CausalLM(), (ids,))
        self.check("causal-lm-loss", models.CausalLM(),
                   (ids, torch.randint(0, 64, (2, 12))), devices=(2,))


class Arguments(unittest.TestCase):
    """compile() and load() refuse what ein-compile's command line
    refuses, naming the argument, before anything is traced (the model
    here is in training mode: a trace would be refused for that)."""

    def setUp(self):
        self.model = nn.Linear(8, 8).train()
        self.x = torch.randn(2, 8)

    def refuses(self, exception, pattern, **keywords):
        with self.assertRaisesRegex(exception, pattern):
            einsummable.compile(self.model, (self.x,), **keywords)

    def test_devices(self):
        self.refuses(TypeError, r"devices must be an int, not float 2\.5",
                     devices=2.5)
        self.refuses(TypeError, "devices must be an int, not bool True",
                     devices=True)
        self.refuses(TypeError, "devices must be an int", devices="2")
        self.refuses(ValueError, "devices must be 1 to 64, got 0", devices=0)
        self.refuses(ValueError, "devices must be 1 to 64, got 65",
                     devices=65)

    def test_memory_limit(self):
        for value in (0, -1):
            self.refuses(ValueError, "memory_limit must be at least one byte",
                         memory_limit=value)
        self.refuses(ValueError, "memory_limit 'junk' is not a size",
                     memory_limit="junk")
        self.refuses(ValueError, "memory_limit '-5GiB' is not a size",
                     memory_limit="-5GiB")
        self.refuses(ValueError, "memory_limit '0GiB' is out of range",
                     memory_limit="0GiB")
        self.refuses(ValueError, "memory_limit '40Gb' has an unknown unit",
                     memory_limit="40Gb")
        for value in (True, 1.5e9, [40]):
            self.refuses(TypeError, "memory_limit must be an int of bytes "
                         "or a size", memory_limit=value)

    def test_memory_limit_units_are_the_command_line_s(self):
        from einsummable import _memory_bytes
        self.assertEqual(_memory_bytes("40GiB"), 40 * 2 ** 30)
        self.assertEqual(_memory_bytes("512MiB"), 512 * 2 ** 20)
        self.assertEqual(_memory_bytes("1.5GB"), 1500000000)
        self.assertEqual(_memory_bytes("64kB"), 64000)
        self.assertEqual(_memory_bytes("2 KiB"), 2048)
        self.assertEqual(_memory_bytes("4096"), 4096)
        self.assertEqual(_memory_bytes(4096), 4096)
        self.assertIsNone(_memory_bytes(None))

    def test_memory_limit_reaches_ein_compile(self):
        model = nn.Linear(64, 64).eval()
        x = torch.randn(8, 64)
        compiled = einsummable.compile(model, (x,), memory_limit="40GiB")
        with torch.no_grad():
            self.assertLess(error(compiled(x), model(x)), TOLERANCE)
        compiled.close()
        with self.assertRaisesRegex(einsummable.CompileError,
                                    "memory limit of 1000 bytes"):
            einsummable.compile(model, (x,), memory_limit="1kB")

    def test_other_keywords_refuse_wrong_types(self):
        for keyword, value in (("approx_math", "yes"), ("tie_layout", 1),
                               ("gemm_epilogues", None),
                               ("weights_replicable", 0),
                               ("exact", "true")):
            self.refuses(TypeError, "%s must be a bool" % keyword,
                         **{keyword: value})
        for keyword, value in (("seed", 1.0), ("state_cap", True),
                               ("seed", "3"), ("search_budget", 1e7)):
            self.refuses(TypeError, "%s must be an int" % keyword,
                         **{keyword: value})
        for keyword, value in (("target", 1), ("strategy", None),
                               ("stages", 2), ("remarks", False)):
            self.refuses(TypeError, "%s must be a str" % keyword,
                         **{keyword: value})
        self.refuses(TypeError, "topology must be a path",
                     topology=["nvswitch"])
        self.refuses(TypeError, "workdir must be a path", workdir=3)
        self.refuses(TypeError, "extra_args must be a list or tuple of "
                     "strings", extra_args="--remarks=none")
        self.refuses(TypeError, "extra_args must be", extra_args=[1])
        self.refuses(ValueError, "seed must be 0 to", seed=-1)
        self.refuses(ValueError, "state_cap must be at least 1, got 0",
                     state_cap=0)
        self.refuses(ValueError, "search_budget must be 0 \\(none\\) or "
                     "more, got -1", search_budget=-1)

    def test_load(self):
        with self.assertRaisesRegex(TypeError, "bundle must be a path"):
            einsummable.load(3)
        with self.assertRaisesRegex(TypeError, "frontend must be a path"):
            einsummable.load("/nonexistent", frontend=1)
        with self.assertRaisesRegex(TypeError, "model must be the "
                                    "torch.nn.Module"):
            einsummable.load("/nonexistent", "my.frontend.json")
        with self.assertRaisesRegex(FileNotFoundError,
                                    "bundle: /nonexistent is not a "
                                    "directory"):
            einsummable.load("/nonexistent")


class TemporaryDirectories(unittest.TestCase):
    """A compile that names no workdir works in a temporary directory of
    its own: the Compiled works while it is open (the bundle, explain(),
    summary()), and close(), the object's collection or a failed compile
    removes the directory, so none accumulate."""

    def setUp(self):
        # compile()'s temporary directories made in a directory of this
        # test's own (other processes may compile beside it).
        self.root = tempfile.TemporaryDirectory(prefix="ein-tmp-")
        self.saved = tempfile.tempdir
        tempfile.tempdir = self.root.name

    def tearDown(self):
        tempfile.tempdir = self.saved
        self.root.cleanup()

    def left(self):
        return sorted(n for n in os.listdir(self.root.name)
                      if n.startswith("einsummable-"))

    def test_compile_then_close_leaves_nothing(self):
        model = models.MLPClassifier().eval()
        x = torch.randn(4, 20)
        with torch.no_grad():
            want = model(x)
        for _ in range(3):
            compiled = einsummable.compile(model, (x,), devices=2)
            self.assertEqual(len(self.left()), 1)
            self.assertTrue(os.path.isdir(compiled.bundle))
            self.assertLess(error(compiled(x), want), TOLERANCE)
            self.assertEqual(compiled.explain()["devices"], 2)
            self.assertIn("2 devices", compiled.summary())
            compiled.close()
            self.assertEqual(self.left(), [])
            compiled.close()  # a second close does nothing

    def test_collected_compile_leaves_nothing(self):
        compiled = einsummable.compile(nn.Linear(8, 8).eval(),
                                       (torch.randn(2, 8),))
        self.assertEqual(len(self.left()), 1)
        del compiled
        gc.collect()
        self.assertEqual(self.left(), [])

    def test_failed_compile_leaves_nothing(self):
        with self.assertRaises(einsummable.CompileError):
            einsummable.compile(nn.Linear(8, 8).eval(), (torch.randn(2, 8),),
                                remarks="bogus")
        with self.assertRaises(einsummable.FrontendError):
            einsummable.compile(lambda x: torch.sort(x).values,
                                (torch.randn(2, 8),))
        self.assertEqual(self.left(), [])

    def test_a_named_workdir_is_kept(self):
        work = os.path.join(self.root.name, "mine")
        einsummable.compile(nn.Linear(8, 8).eval(), (torch.randn(2, 8),),
                            workdir=work).close()
        self.assertTrue(os.path.isdir(os.path.join(work, "bundle")))
        self.assertTrue(os.path.exists(os.path.join(work, "model.mlir")))


if __name__ == "__main__":
    unittest.main()
