"""The front end against the PyTorch modules themselves: each model is
compiled for the CPU target at 1 to 4 devices and called like the model;
its output must equal the model's own within the dtype's tolerance
(relative to max(1, max|reference|), as ein-run --check measures)."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import einsummable  # noqa: E402
import models  # noqa: E402

TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 2e-2}
DEVICES = (1, 2, 3, 4)


def error(got, want):
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max().clamp(min=1)).item()


class Models(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-frontend-")
        torch.manual_seed(0)

    def tearDown(self):
        self.dir.cleanup()

    def check(self, name, model, inputs, devices=DEVICES,
              dtype=torch.float32):
        model = model.to(dtype).eval()
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x
                       for x in inputs)
        with torch.no_grad():
            want = model(*inputs)
        for d in devices:
            with self.subTest(model=name, devices=d):
                compiled = einsummable.compile(
                    model, inputs, devices=d,
                    workdir=os.path.join(self.dir.name, "%s-%d" % (name, d)))
                self.assertEqual(compiled.devices, d)
                got = compiled(*inputs)
                self.assertEqual(got.shape, want.shape)
                self.assertEqual(got.dtype, want.dtype)
                self.assertLess(error(got, want), TOLERANCE[dtype])
                compiled.close()

    def test_small_cnn(self):
        # Conv2d, ReLU, MaxPool2d, Linear: ein.conv and ein.pool.
        self.check("cnn", models.SmallCNN(), (torch.randn(2, 3, 8, 8),))

    def test_strided_cnn(self):
        # Strides, dilations, paddings, max and average pooling, on odd
        # sizes; at 4 devices cut by output rows and columns too (halos).
        model, x = models.StridedCNN(), (torch.randn(2, 3, 23, 19),)
        self.check("strided", model, x)
        with torch.no_grad():
            want = model.eval()(*x)
        compiled = einsummable.compile(
            model, x, devices=4, strategy="spatial",
            workdir=os.path.join(self.dir.name, "spatial"))
        self.assertLess(error(compiled(*x), want), TOLERANCE[torch.float32])
        compiled.close()

    def test_grouped_convolutions(self):
        # Depthwise (stride 1 and 2, a channel multiplier) and grouped
        # convolutions with padding and dilation: ein.conv with groups, at
        # 1 to 4 devices and at 2 and 4 with strategy="spatial" (cut by
        # rows and columns, with halos).
        model, x = models.GroupedCNN(), (torch.randn(2, 3, 12, 10),)
        self.check("grouped", model, x)
        with torch.no_grad():
            want = model.eval()(*x)
        for d in (2, 4):
            with self.subTest(strategy="spatial", devices=d):
                compiled = einsummable.compile(
                    model, x, devices=d, strategy="spatial",
                    workdir=os.path.join(self.dir.name, "spatial-%d" % d))
                self.assertLess(error(compiled(*x), want),
                                TOLERANCE[torch.float32])
                compiled.close()

    def test_grouped_convolutions_bf16(self):
        self.check("grouped-bf16", models.GroupedCNN(),
                   (torch.randn(1, 3, 8, 8),), devices=(1, 2),
                   dtype=torch.bfloat16)

    def test_top_one_router(self):
        # max(dim) and argmax: one ein.arg_reduce (indices) and a max
        # join-agg (values) each; the indices feed an embedding lookup.
        self.check("router", models.TopOneRouter(), (torch.randn(2, 5, 16),))

    def test_gpt2_block(self):
        self.check("gpt2", models.GPT2Block(), (torch.randn(2, 16, 64),))

    def test_llama_block(self):
        self.check("llama", models.LlamaBlock(), (torch.randn(2, 16, 64),))

    def test_encoder_layer(self):
        self.check("encoder", models.EncoderLayer(),
                   (torch.randn(2, 8, 48),))

    def test_token_embeddings(self):
        # nn.Embedding twice (tokens and positions) is ein.gather; ids cover
        # the whole vocabulary, first and last rows included.
        ids = torch.tensor([[0, 5, 17, 30, 31, 2, 9, 9],
                            [31, 0, 1, 1, 12, 25, 3, 7]])
        self.check("embed", models.TinyLM(), (ids,))

    def test_token_embeddings_bf16(self):
        ids = torch.randint(0, 32, (2, 8))
        self.check("embed-bf16", models.TinyLM(), (ids,), devices=(1, 3),
                   dtype=torch.bfloat16)

    def test_mlp_classifier(self):
        self.check("mlp", models.MLPClassifier(), (torch.randn(6, 20),))

    def test_partials_in_the_output_precision(self):
        # Megatron's plan cuts the second linear layer's summed loop: its
        # two partial sums move and add in bf16 with partials="out".
        model = models.MLPClassifier().to(torch.bfloat16).eval()
        x = torch.randn(6, 20).to(torch.bfloat16)
        with torch.no_grad():
            want = model(x)
        compiled = einsummable.compile(
            model, (x,), devices=2, strategy="megatron", partials="out",
            workdir=os.path.join(self.dir.name, "partials"))
        self.assertLess(error(compiled(x), want), TOLERANCE[torch.bfloat16])
        import json
        with open(os.path.join(self.dir.name, "partials", "bundle",
                               "manifest.json")) as f:
            manifest = json.load(f)
        dtype = {b["name"]: b["type"]["dtype"] for b in manifest["buffers"]}
        inputs = {dtype[i] for s in manifest["steps"]
                  if s["kind"] == "aggregate" for i in s["inputs"]}
        self.assertEqual(inputs, {"bf16"})
        compiled.close()

    def test_pipeline_stages(self):
        # Two stages on two nodes of one device, the batch of 4 in two
        # micro-batches: the module's output, and the bundle's ops placed
        # on both nodes with the activations crossing between them.
        model = models.GPT2Block().eval()
        x = torch.randn(4, 16, 64)
        with torch.no_grad():
            want = model(x)
        compiled = einsummable.compile(
            model, (x,), devices=2, topology="nodes=2,gpus=1", stages="2x2",
            workdir=os.path.join(self.dir.name, "stages"))
        self.assertLess(error(compiled(x), want), TOLERANCE[torch.float32])
        self.assertIn("between nodes", compiled.summary())
        self.assertNotIn("0.00 MB between nodes", compiled.summary())
        compiled.close()
        with self.assertRaisesRegex(einsummable.CompileError,
                                    "does not split into 3 micro-batches"):
            einsummable.compile(model, (x,), devices=2,
                                topology="nodes=2,gpus=1", stages="2x3")

    def test_dataflow_chunks(self):
        # As dataflow bundles on two devices, the module's output every way:
        # the batch of 4 in two chunks and the plan itself (GPT-2), and a
        # batch of one row in two chunks of its sequence: LLaMA's RoPE tables
        # cut with the chunks and its causal attention run per chunk over the
        # keys up to it (2 chunks on 2 GPUs: 4 attention steps), and GPT-2's
        # unfused attention, whose causal mask is computed once from its bias
        # buffer and then cut with the chunks that read it.
        gpt2, llama = models.GPT2Block().eval(), models.LlamaBlock().eval()
        x, x1 = torch.randn(4, 16, 64), torch.randn(1, 16, 64)
        for name, model, inputs, stages in (("batch", gpt2, x, "1x2"),
                                            ("plan", gpt2, x, "1x1"),
                                            ("sequence", llama, x1, "1x2"),
                                            ("gpt2-sequence", gpt2, x1,
                                             "1x2")):
            with torch.no_grad():
                want = model(inputs)
            compiled = einsummable.compile(
                model, (inputs,), devices=2, stages=stages,
                weights_replicable=name != "plan",
                workdir=os.path.join(self.dir.name, name))
            self.assertLess(error(compiled(inputs), want),
                            TOLERANCE[torch.float32])
            self.assertIn("dataflow:", compiled.summary())
            if name == "sequence":
                self.assertIn(" 4 attention,", compiled.summary())
            lowered = [p for p in compiled.explain()["pipeline"]
                       if p.get("lowered")]
            self.assertEqual(
                [(p["cut"], p["micro_batches"]) for p in lowered],
                [("sequence" if "sequence" in name else "batch",
                  1 if name == "plan" else 2)])
            compiled.close()

    def test_compute_term(self):
        # The planner's compute term by measured kernel times (the CUDA
        # default) plans a CPU bundle too, whose output is still the
        # module's; a term that does not exist is refused.
        model = models.GPT2Block().eval()
        x = torch.randn(2, 16, 64)
        with torch.no_grad():
            want = model(x)
        compiled = einsummable.compile(
            model, (x,), devices=4, compute="kernels",
            workdir=os.path.join(self.dir.name, "kernels"))
        self.assertLess(error(compiled(x), want), TOLERANCE[torch.float32])
        compiled.close()
        with self.assertRaisesRegex(einsummable.CompileError,
                                    "compute must be kernels or flops"):
            einsummable.compile(model, (x,), devices=2, compute="time")

    def test_approx_math(self):
        # A bf16 SiLU (f32 exp and division inside) compiled for CUDA: the
        # approximate instructions by default, IEEE ones with
        # approx_math=False, so the two bundles' kernels differ; the same
        # setting twice gives the same kernels.
        model = nn.Sequential(nn.Linear(64, 64, bias=False),
                              nn.SiLU()).to(torch.bfloat16).eval()
        x = torch.randn(16, 64, dtype=torch.bfloat16)

        def kernels(name, **kw):
            workdir = os.path.join(self.dir.name, name)
            try:
                einsummable.compile(model, (x,), target="cuda",
                                    workdir=workdir, **kw).close()
            except RuntimeError:
                pass  # no GPU here: the bundle is written, it cannot load
            path = os.path.join(workdir, "bundle", "kernels", "device.cubin")
            with open(path, "rb") as f:
                return f.read()

        approx = kernels("approx")
        self.assertEqual(approx, kernels("approx-again", approx_math=True))
        self.assertNotEqual(approx, kernels("exact", approx_math=False))

    def test_flops(self):
        # A bias-free linear layer of a 6x20 input into 64: 2 * 6 * 20 * 64
        # operations whatever the plan; the cpu target has no peak rate.
        model = nn.Linear(20, 64, bias=False).eval()
        x = torch.randn(6, 20)
        compiled = einsummable.compile(
            model, (x,), devices=2, workdir=os.path.join(self.dir.name, "flops"))
        self.assertEqual(compiled.flops, 2 * 6 * 20 * 64)
        self.assertEqual(compiled.peak_flops, 0)
        compiled.close()

    def test_gpt2_block_bf16(self):
        self.check("gpt2-bf16", models.GPT2Block(),
                   (torch.randn(2, 16, 64),), devices=(1, 2, 4),
                   dtype=torch.bfloat16)

    def test_llama_block_repeat_kv(self):
        self.check("llama-repeat-kv",
                   models.LlamaBlock(heads=8, kv_heads=2, repeat="expand"),
                   (torch.randn(1, 16, 64),))

    def test_llama_block_bf16(self):
        self.check("llama-bf16", models.LlamaBlock(),
                   (torch.randn(2, 16, 64),), devices=(1, 2, 4),
                   dtype=torch.bfloat16)

    def test_function_with_tuple_result(self):
        w = torch.randn(24, 16)

        def f(x, y):
            h = torch.tanh(x @ w)
            return h.sum(-1), torch.relu(h * y).amax(0, keepdim=True)
        x, y = torch.randn(8, 24), torch.randn(8, 16)
        compiled = einsummable.compile(f, (x, y), devices=2,
                                       workdir=self.dir.name)
        got = compiled(x, y)
        want = f(x, y)
        self.assertIsInstance(got, tuple)
        for g, r in zip(got, want):
            self.assertLess(error(g, r), 1e-4)


    def test_function_with_mapping_result(self):
        # As transformers' ModelOutput: read by key, attribute or position,
        # fields that are None left out.
        w = torch.randn(24, 16)

        def f(x):
            h = x @ w
            return {"logits": h, "loss": None, "hidden": torch.tanh(h)}
        x = torch.randn(8, 24)
        compiled = einsummable.compile(f, (x,), devices=2,
                                       workdir=self.dir.name)
        got = compiled(x)
        want = f(x)
        self.assertEqual(list(got), ["logits", "hidden"])
        self.assertLess(error(got["logits"], want["logits"]), 1e-4)
        self.assertLess(error(got.hidden, want["hidden"]), 1e-4)
        self.assertLess(error(got[1], want["hidden"]), 1e-4)
        with open(os.path.join(self.dir.name, "frontend.json")) as f:
            outputs = json.load(f)["outputs"]
        self.assertEqual(outputs, {"kind": "dict", "count": 2,
                                   "names": ["logits", "hidden"]})


class Indexing(unittest.TestCase):
    """Indices known at trace time (aranges, lists), strided slices and
    boolean masks, as transformers builds its attention masks from a 0/1
    padding mask: checked against the module at 1 and 2 devices."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-indexing-")
        torch.manual_seed(0)

    def tearDown(self):
        self.dir.cleanup()

    def check(self, model, inputs, devices=(1, 2)):
        with torch.no_grad():
            want = model(*inputs)
        for d in devices:
            with self.subTest(devices=d):
                compiled = einsummable.compile(
                    model.eval(), inputs, devices=d,
                    workdir=os.path.join(self.dir.name, str(d)))
                got = compiled(*inputs)
                for g, w in zip(got, want):
                    self.assertEqual(g.shape, w.shape)
                    self.assertLess(error(g, w), 1e-5)
                compiled.close()

    def test_padding_mask_read_with_aranges(self):
        class Masked(nn.Module):
            def forward(self, q, mask):
                batch, keys = mask.shape
                b = torch.arange(batch)[:, None, None, None]
                i = torch.arange(keys)[None, None, :, None]
                j = torch.arange(keys)[None, None, None, :]
                keep = mask.bool()[b, j] & (j <= i)
                scores = q @ q.transpose(-1, -2)
                hidden = scores.masked_fill(~keep, -1e9).softmax(-1)
                either = torch.logical_or(mask[:, None, None, :] > 0, j > i)
                return hidden, (either ^ (j < 2)).float()
        mask = torch.ones(2, 6, dtype=torch.int64)
        mask[1, 4:] = 0
        self.check(Masked(), (torch.randn(2, 3, 6, 8), mask))

    def test_index_lists_and_strided_slices(self):
        class Picks(nn.Module):
            def forward(self, x):
                return (x[:, torch.tensor([2, 0, 1])],
                        x[:, :, ::2], x[..., 1::3], x[:, 1:, 2:7:4],
                        x[torch.tensor([1]), 1:, torch.tensor([[0], [3]])],
                        x[:, torch.tensor([-1, 0])][..., torch.tensor(5)])
        self.check(Picks(), (torch.randn(2, 3, 7),))

    def test_boolean_mask_indices_are_refused(self):
        # (Run-time integer indices are read as test_zoo's Indexing checks.)
        def f(x):
            return x[x > 0]
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(f, (torch.randn(5, 3),),
                                workdir=self.dir.name)
        self.assertIn("aten.index", str(caught.exception))
        self.assertIn("boolean mask", str(caught.exception))


class SafeSoftmax(unittest.TestCase):
    """aten._safe_softmax (PyTorch 2's softmax inside attention's math
    form) gives 0 on a row that is all -inf. PyTorch 1.13 has no such op,
    so its translation is checked here in softmax's place."""

    def test_rows_all_minus_infinity_give_zero(self):
        from einsummable import _aten
        x = torch.randn(4, 6)
        x[1] = float("-inf")
        x[2, :3] = float("-inf")
        want = torch.softmax(x, -1).nan_to_num(0.0) * 2
        saved = _aten.HANDLERS["aten::_softmax"]
        _aten.HANDLERS["aten::_softmax"] = _aten.HANDLERS[
            "aten::_safe_softmax"]
        try:
            with tempfile.TemporaryDirectory() as work:
                compiled = einsummable.compile(
                    lambda x: torch.softmax(x, -1) * 2, (x,), devices=2,
                    workdir=work)
                got = compiled(x)
        finally:
            _aten.HANDLERS["aten::_softmax"] = saved
        self.assertTrue(torch.equal(got[1], torch.zeros(6)))
        self.assertLess(error(got, want), 1e-6)


class CausalMasks(unittest.TestCase):
    """Which attention masks known at trace time are the causal attention
    ein fuses (PyTorch 2's scaled_dot_product_attention, which 1.13 lacks:
    checked on the masks themselves)."""

    def test_causal_masks(self):
        from einsummable._aten import Const, _is_causal_mask
        n = 6
        keep = torch.ones(n, n).tril().bool()
        # transformers' export form: f16's finfo.min rounded to bf16.
        additive = torch.zeros(n, n).masked_fill(~keep, -65504.0).to(
            torch.bfloat16)[None, None].expand(2, 1, n, n)
        self.assertTrue(_is_causal_mask(Const(keep)))
        self.assertTrue(_is_causal_mask(Const(additive)))
        self.assertTrue(_is_causal_mask(Const(torch.zeros(n, n).masked_fill(
            ~keep, float("-inf")))))
        # A mild penalty, the keys on or before the query hidden, another
        # diagonal, a padded row: not the causal attention.
        self.assertFalse(_is_causal_mask(Const(torch.zeros(n, n).masked_fill(
            ~keep, -100.0))))
        self.assertFalse(_is_causal_mask(Const(~keep)))
        self.assertFalse(_is_causal_mask(Const(torch.ones(n, n).tril(
            1).bool())))
        padded = keep.clone()
        padded[:, 4:] = False
        self.assertFalse(_is_causal_mask(Const(padded)))


class InPlace(unittest.TestCase):
    def test_in_place_ops_are_functionalized(self):
        class Residual(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(16, 16)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x):
                h = self.act(self.fc(x))
                h += x  # in place on an intermediate
                h.mul_(0.5)
                return h
        model = Residual().eval()
        x = torch.randn(4, 16)
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (x,), devices=2,
                                           workdir=work)
            with torch.no_grad():
                self.assertLess(error(compiled(x), model(x)), 1e-4)


class Plans(unittest.TestCase):
    """The front end must not cost the planner anything: the LLaMA block
    written as an nn.Module plans like the block examples/gen_llama_block.py
    writes in the ein dialect (the same spec for the attention, both
    RMSNorms and the seven projections)."""

    def specs(self, plan):
        ops = plan["ops"]
        heavy = sorted((o for o in ops if o["op"].startswith("ein.join_agg")),
                       key=lambda o: -o["cost"]["compute"])[:7]
        return ([(o["op"].split()[0], o["spec"]) for o in ops
                 if o["op"].split()[0] in ("ein.attention", "ein.rms_norm")],
                [o["spec"] for o in ops if o in heavy])

    def test_llama_block_plans_as_the_generated_one(self):
        root = os.path.dirname(os.path.dirname(HERE))
        build = einsummable._tools.build_dir()
        torch.manual_seed(0)
        x = torch.randn(2, 16, 64)
        with tempfile.TemporaryDirectory() as work:
            generated = os.path.join(work, "generated.mlir")
            with open(generated, "w") as f:
                subprocess.run(
                    [sys.executable, os.path.join(root, "examples",
                                                  "gen_llama_block.py"),
                     "--hidden", "64", "--heads", "4", "--kv-heads", "2",
                     "--ffn", "128", "--batch", "2", "--seq", "16"],
                    check=True, stdout=f)
            # GQA as the test block writes it (repeat_interleave) and as
            # transformers does (expand and reshape, repeat_kv).
            for d, repeat in ((2, "interleave"), (8, "interleave"),
                              (2, "expand"), (8, "expand")):
                model = models.LlamaBlock(d=64, heads=4, kv_heads=2,
                                          ffn=128, seq=16,
                                          repeat=repeat).eval()
                with self.subTest(devices=d, repeat=repeat):
                    compiled = einsummable.compile(
                        model, (x,), devices=d,
                        workdir=os.path.join(work, "front-%d-%s"
                                             % (d, repeat)))
                    explain = os.path.join(work, "generated-%d.json" % d)
                    subprocess.run(
                        [os.path.join(build, "bin", "ein-compile"),
                         generated, "-o", os.path.join(work, "gen-%d" % d),
                         "--devices=%d" % d, "--explain=" + explain],
                        check=True, stdout=subprocess.DEVNULL)
                    with open(explain) as f:
                        import json
                        reference = json.load(f)
                    mine = self.specs(compiled.explain())
                    self.assertEqual(len(mine[0]), 3)
                    self.assertEqual(mine, self.specs(reference))


    def test_rmsnorm_in_f32_between_casts_fuses(self):
        """transformers' LlamaRMSNorm: the input widened to f32, normalised,
        narrowed back and scaled: one ein.rms_norm (the widening is read,
        not copied), equal to the module in bf16."""
        class CastNorm(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(64))

            def forward(self, h):
                dtype = h.dtype
                h = h.to(torch.float32)
                var = h.pow(2).mean(-1, keepdim=True)
                return self.weight * (h * torch.rsqrt(var + 1e-6)).to(dtype)
        model = CastNorm().to(torch.bfloat16).eval()
        x = torch.randn(2, 8, 64).to(torch.bfloat16)
        build = einsummable._tools.build_dir()
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (x,), devices=2,
                                           workdir=work)
            imported = subprocess.run(
                [os.path.join(build, "bin", "ein-opt"), compiled.mlir,
                 "--ein-import", "--ein-fuse-composites"],
                check=True, capture_output=True, text=True).stdout
            self.assertEqual(imported.count("ein.rms_norm"), 1)
            self.assertNotIn("ein.join_agg", imported)
            with torch.no_grad():
                self.assertLess(error(compiled(x), model(x)), 2e-2)


    def test_lost_attention_fusion_is_a_warning(self):
        # GPT-2's mask is a buffer (a weight): its attention cannot fuse,
        # and ein-compile's remark reaches Python as a warning naming why.
        with tempfile.TemporaryDirectory() as work:
            with self.assertWarns(einsummable.CompileRemark) as caught:
                einsummable.compile(models.GPT2Block().eval(),
                                    (torch.randn(2, 16, 64),), workdir=work)
            self.assertIn("attention not fused", str(caught.warning))
            self.assertIn("models.py", str(caught.warning))


class Binding(unittest.TestCase):
    """Weights are bound by name: a bundle runs with the weights of the
    model it is loaded with, not those it was compiled from."""

    def test_load_binds_weights_by_name(self):
        torch.manual_seed(1)
        model = models.GPT2Block().eval()
        x = torch.randn(2, 16, 64)
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (x,), devices=2,
                                           workdir=work)
            other = copy.deepcopy(model)
            with torch.no_grad():
                for p in other.parameters():
                    p.add_(0.1 * torch.randn_like(p))
            loaded = einsummable.load(compiled.bundle, other)
            with torch.no_grad():
                self.assertLess(error(loaded(x), other(x)), 1e-4)
                self.assertGreater(error(loaded(x), model(x)), 1e-3)
            # The weights stay bound between calls; a call sets the inputs.
            y = torch.randn(2, 16, 64)
            with torch.no_grad():
                self.assertLess(error(loaded(y), other(y)), 1e-4)

    def test_tied_weights_are_one_argument(self):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(16, 16, bias=False)
                self.b = nn.Linear(16, 16, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(torch.relu(self.a(x)))
        model = Tied().eval()
        x = torch.randn(4, 16)
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (x,), devices=2,
                                           workdir=work)
            with open(compiled.mlir) as f:
                text = f.read()
            signature = [line for line in text.splitlines()
                         if "func.func" in line][0]
            self.assertEqual(signature.count("{ein.weight}"), 1)
            with torch.no_grad():
                self.assertLess(error(compiled(x), model(x)), 1e-4)

    def test_explain_and_summary(self):
        model = models.MLPClassifier().eval()
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (torch.randn(8, 20),),
                                           devices=2, workdir=work)
            plan = compiled.explain()
            self.assertEqual(plan["devices"], 2)
            self.assertTrue(plan["ops"])
            self.assertIn("2 devices", compiled.summary())
            with self.assertRaisesRegex(RuntimeError, "call the model once"):
                compiled.bench(1, 3)
            compiled(torch.randn(8, 20))
            self.assertGreater(compiled.bench(1, 3), 0)


RANK_SCRIPT = """
import sys, torch
sys.path[:0] = sys.argv[1:3]
import einsummable, models
work = sys.argv[3]
model = models.GPT2Block().eval()
model.load_state_dict(torch.load(work + "/weights.pt"))
x = torch.load(work + "/x.pt")
loaded = einsummable.load(work + "/bundle", model)
with torch.no_grad():
    got, want = loaded(x), model(x)
if loaded.rank == 0:
    err = ((got - want).abs().max() / want.abs().max().clamp(min=1)).item()
    line = "rank 0 of %d: error %.3g" % (loaded.ranks, err)
else:
    line = "rank %d of %d: %r" % (loaded.rank, loaded.ranks, got)
# A file per rank: mpirun forwards the ranks' standard outputs interleaved,
# a line of one sometimes inside a line of the other.
with open("%s/rank%d.txt" % (work, loaded.rank), "w") as f:
    f.write(line + "\\n")
"""


class Ranks(unittest.TestCase):
    """A model compiled for two nodes runs as two processes under mpirun
    (docs/distributed.md): every rank loads it and calls it; rank 0 gets
    the model's result, the other rank None."""

    def test_two_nodes_under_mpirun(self):
        torch.manual_seed(2)
        model = models.GPT2Block().eval()
        x = torch.randn(2, 16, 64)
        with tempfile.TemporaryDirectory() as work:
            compiled = einsummable.compile(model, (x,), devices=4,
                                           topology="nodes=2,gpus=2",
                                           workdir=work)
            self.assertEqual((compiled.rank, compiled.ranks), (0, 1))
            torch.save(model.state_dict(), os.path.join(work, "weights.pt"))
            torch.save(x, os.path.join(work, "x.pt"))
            env = dict(os.environ,
                       OMPI_MCA_btl_vader_single_copy_mechanism="none")
            run = subprocess.run(
                ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n",
                 "2", sys.executable, "-c", RANK_SCRIPT,
                 os.path.dirname(HERE), HERE, work],
                env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            lines = []
            for rank in range(2):
                with open(os.path.join(work, "rank%d.txt" % rank)) as f:
                    lines.append(f.read().strip())
            self.assertEqual(lines[1], "rank 1 of 2: None")
            self.assertTrue(lines[0].startswith("rank 0 of 2: error "),
                            run.stdout)
            self.assertLess(float(lines[0].split()[-1]), 1e-4)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ein-refusal-")

    def tearDown(self):
        self.dir.cleanup()

    def test_unsupported_op_names_op_and_line(self):
        def f(x):
            return torch.sort(x, 0).values  # the line the error must name
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(f, (torch.randn(4, 4),),
                                workdir=self.dir.name)
        message = str(caught.exception)
        self.assertIn("aten.sort", message)
        self.assertIn("test_frontend.py:%d" % (
            f.__code__.co_firstlineno + 1), message)

    def test_data_dependent_shape(self):
        def f(x):
            return x[x > 0]
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(f, (torch.randn(8),), workdir=self.dir.name)
        self.assertIn("aten.index", str(caught.exception))

    def test_non_tensor_result(self):
        def f(x):
            return x.shape[0]
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(f, (torch.randn(4),), workdir=self.dir.name)
        self.assertIn("must return a tensor", str(caught.exception))

    def test_non_tensor_field_of_a_mapping_result(self):
        # What a transformers model built with use_cache=True returns: a
        # field that is no tensor is named, never dropped.
        def f(x):
            return {"logits": x * 2, "past_key_values": [x]}
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(f, (torch.randn(4),), workdir=self.dir.name)
        self.assertIn("'past_key_values' is a list", str(caught.exception))
        self.assertIn("use_cache=False", str(caught.exception))

    def test_training_mode(self):
        with self.assertRaises(einsummable.FrontendError) as caught:
            einsummable.compile(models.EncoderLayer().train(),
                                (torch.randn(2, 8, 48),),
                                workdir=self.dir.name)
        self.assertIn("model.eval()", str(caught.exception))

    def test_wrong_inputs_raise_before_running(self):
        model = models.MLPClassifier().eval()
        compiled = einsummable.compile(model, (torch.randn(4, 20),),
                                       workdir=self.dir.name)
        with self.assertRaisesRegex(ValueError, "input 0 has shape"):
            compiled(torch.randn(5, 20))
        with self.assertRaisesRegex(TypeError, "input 0 is torch.float64"):
            compiled(torch.randn(4, 20, dtype=torch.float64))
        with self.assertRaisesRegex(TypeError, "takes 1 inputs, got 2"):
            compiled(torch.randn(4, 20), torch.randn(4, 20))

    def test_refused_compile_leaves_no_bundle(self):
        # A 1x1 convolution padded by 1, which ein.conv refuses (its border
        # outputs read padding only): ein-compile's own diagnostic names the
        # model's source line.
        with self.assertRaises(einsummable.CompileError) as caught:
            einsummable.compile(models.PaddedPointwise().eval(),
                                (torch.randn(2, 3, 8, 8),),
                                workdir=self.dir.name)
        self.assertIn("models.py", str(caught.exception))
        self.assertIn("read padding only", str(caught.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir.name,
                                                     "bundle")))
        self.assertFalse(os.path.exists(os.path.join(self.dir.name,
                                                     "bundle.partial")))



class CommandLine(unittest.TestCase):
    def test_export_then_ein_run_with_weights(self):
        """python3 -m einsummable export writes the program and the weights;
        ein-compile and ein-run --weights-dir run it; the result equals the
        module's."""
        build = einsummable._tools.build_dir()
        with tempfile.TemporaryDirectory() as work:
            env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
            subprocess.run(
                [sys.executable, "-m", "einsummable", "export",
                 os.path.join(HERE, "models.py") + ":MLPClassifier",
                 "--inputs", "6x20:f32", "--seed", "3",
                 "-o", os.path.join(work, "mlp.mlir"),
                 "--weights-dir", os.path.join(work, "weights")],
                check=True, env=env)
            subprocess.run(
                [os.path.join(build, "bin", "ein-compile"),
                 os.path.join(work, "mlp.mlir"), "-o",
                 os.path.join(work, "bundle"), "--devices=3"],
                check=True, stdout=subprocess.DEVNULL)
            torch.manual_seed(3)
            model = models.MLPClassifier().eval()
            x = torch.randn(6, 20)
            import numpy
            numpy.save(os.path.join(work, "x.npy"), x.numpy())
            subprocess.run(
                [os.path.join(build, "bin", "ein-run"),
                 os.path.join(work, "bundle"),
                 "--weights-dir=" + os.path.join(work, "weights"),
                 "--inputs=" + os.path.join(work, "x.npy"),
                 "--outputs=" + os.path.join(work, "out.npy")],
                check=True, stdout=subprocess.DEVNULL)
            got = torch.from_numpy(numpy.load(
                os.path.join(work, "out.npy")))
            with torch.no_grad():
                self.assertLess(error(got, model(x)), 1e-4)


if __name__ == "__main__":
    unittest.main()
