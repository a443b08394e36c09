#!/usr/bin/env python3
"""Whole models nobody on the project wrote, through the Python front end,
in three steps across two machines, and a fourth that times them (the GPU
machine has PyTorch 2, transformers, torchvision and timm but no LLVM; the
build machine has the compiler):

  there: python3 bench/models_gpu.py export DIR [NAMES]   # trace, linalg
  here:  python3 bench/models_gpu.py compile DIR [NAMES]  # ein-compile, CUDA
  there: python3 bench/models_gpu.py run DIR [NAMES]      # load, compare
  there: python3 bench/models_gpu.py bench DIR [NAMES]    # time vs peers

(NAMES: a comma list of the models below, or of families (`lm`, `vision`,
`encoder`, `real`: causal LMs at the sizes of real checkpoints, `8b`:
Llama-3-8B's config with 1 to 32 layers); all but `8b` when left out.)

Each model is built from its library's config with random weights from a
fixed seed on both machines, in bf16, in eval mode, and called as a user
calls it: a causal LM on int64 token ids (and on ids with a 0/1 padding
`attention_mask`), returning its ModelOutput (logits); an encoder on ids or
pixels, returning hidden states; a vision classifier on images, returning
logits. `export` traces through `torch.export` (einsummable.export) and
writes the program and frontend.json; `compile` runs `ein-compile
--target=cuda --devices=1`; `run` loads the bundle bound to the module's
own weights and measures every output, as the module's own bf16 answer is
measured, against the module run in f32 (its bf16 weights widened): the
error is the largest |answer - f32 answer| over max(1, max|f32 answer|);
right where it is under 2e-2 or at most twice the bf16 module's (deep
models drift in bf16 whoever runs them); the table shows both, the
difference from the bf16 module, and max|reference|. Parameters a library initializes to
(almost) nothing and batch norms' statistics are drawn again first, so no
output is trivially near zero. Each step prints one line per model and a
table last.
"""

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

SEQ = 128
VOCAB = 1024


def _torch():
    import torch
    return torch


def causal_lm(model_type, layers=2, hidden=256, heads=4, kv=2, inter=512,
              vocab=VOCAB, **extra):
    """AutoModelForCausalLM.from_config at the given sizes."""
    def make():
        from transformers import AutoConfig, AutoModelForCausalLM
        if model_type == "gpt2":
            sizes = dict(n_embd=hidden, n_layer=layers, n_head=heads,
                         n_positions=max(1024, SEQ), vocab_size=vocab)
        else:
            sizes = dict(hidden_size=hidden, intermediate_size=inter,
                         num_hidden_layers=layers, num_attention_heads=heads,
                         num_key_value_heads=kv, vocab_size=vocab,
                         max_position_embeddings=4096)
        sizes.update(extra)
        config = AutoConfig.for_model(model_type, use_cache=False, **sizes)
        return AutoModelForCausalLM.from_config(config,
                                                attn_implementation="sdpa")
    return make


def bert(layers=2, hidden=256, heads=4, inter=512):
    def make():
        from transformers import AutoModel, BertConfig
        config = BertConfig(hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=heads,
                            intermediate_size=inter, vocab_size=VOCAB)
        return AutoModel.from_config(config, attn_implementation="sdpa")
    return make


def vit(layers=2, hidden=192, heads=3, image=64, patch=16):
    def make():
        from transformers import AutoModel, ViTConfig
        config = ViTConfig(hidden_size=hidden, num_hidden_layers=layers,
                           num_attention_heads=heads,
                           intermediate_size=4 * hidden, image_size=image,
                           patch_size=patch)
        return AutoModel.from_config(config, attn_implementation="sdpa")
    return make


def torchvision_model(name, **kwargs):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return make


def timm_model(name, **kwargs):
    def make():
        import timm
        return timm.create_model(name, pretrained=False, **kwargs)
    return make


def ids(batch=2, seq=SEQ):
    return ("ids", (batch, seq))


def ids_mask(batch=2, seq=SEQ):
    return ("ids+mask", (batch, seq))


def image(batch=2, size=224):
    return ("image", (batch, 3, size, size))


# name: (family, factory, inputs)
MODELS = {
    "llama": ("lm", causal_lm("llama"), ids()),
    "llama-mask": ("lm", causal_lm("llama"), ids_mask()),
    "qwen2": ("lm", causal_lm("qwen2"), ids()),
    "mistral": ("lm", causal_lm("mistral"), ids()),
    "gemma": ("lm", causal_lm("gemma", head_dim=64), ids()),
    "phi3": ("lm", causal_lm("phi3", pad_token_id=0), ids()),
    "gpt2": ("lm", causal_lm("gpt2"), ids()),
    "gpt2-mask": ("lm", causal_lm("gpt2"), ids_mask()),
    "bert": ("encoder", bert(), ids()),
    "bert-mask": ("encoder", bert(), ids_mask()),
    "vit": ("encoder", vit(), image(2, 64)),
    "resnet18": ("vision", torchvision_model("resnet18"), image()),
    "mobilenet_v2": ("vision", torchvision_model("mobilenet_v2"), image()),
    "mobilenet_v3_small": ("vision",
                           torchvision_model("mobilenet_v3_small"), image()),
    "efficientnet_b0": ("vision", torchvision_model("efficientnet_b0"),
                        image()),
    "convnext_tiny": ("vision", torchvision_model("convnext_tiny"), image()),
    "regnet_y_400mf": ("vision", torchvision_model("regnet_y_400mf"),
                       image()),
    "vit_b_16": ("vision", torchvision_model("vit_b_16"), image()),
    "timm-convnext_atto": ("vision", timm_model("convnext_atto"), image()),
    # At the sizes of real checkpoints (random weights): GPT-2 (124M),
    # Qwen2.5-0.5B and Llama-3.2-1B (tied embeddings), one sequence.
    "gpt2-124m": ("real", causal_lm("gpt2", layers=12, hidden=768,
                                    heads=12, vocab=50257), ids(1, 1024)),
    "qwen2.5-0.5b": ("real", causal_lm(
        "qwen2", layers=24, hidden=896, heads=14, kv=2, inter=4864,
        vocab=151936, tie_word_embeddings=True), ids(1, 1024)),
    "llama-3.2-1b": ("real", causal_lm(
        "llama", layers=16, hidden=2048, heads=32, kv=8, inter=8192,
        vocab=128256, tie_word_embeddings=True, rope_theta=500000.0),
        ids(1, 1024)),
}
# Llama-3-8B's config (32 layers, vocabulary 128256, hidden 4096, GQA 32/8,
# FFN 14336), batch 1 x 2048 tokens, and the same with fewer layers, for
# the compile-time table of docs/frontend.md. Built on the GPU in bf16
# (16 GB of weights: initializing them on the CPU in f32 takes minutes).
for _layers in (1, 2, 4, 8, 16, 32):
    MODELS["llama-3-8b" + ("" if _layers == 32 else "-%dl" % _layers)] = (
        "8b", causal_lm("llama", layers=_layers, hidden=4096, heads=32, kv=8,
                        inter=14336, vocab=128256, rope_theta=500000.0),
        ids(1, 2048))


def inputs_for(kind, shape, device, vocab=VOCAB):
    """The seeded example inputs of a model (ids in the vocabulary; a mask
    whose second row pads its last quarter)."""
    torch = _torch()
    torch.manual_seed(1)
    if kind == "image":
        return (torch.randn(*shape).to(torch.bfloat16).to(device),)
    tokens = torch.randint(0, vocab, shape, dtype=torch.int64).to(device)
    if kind == "ids":
        return (tokens,)
    mask = torch.ones(shape, dtype=torch.int64)
    mask[-1, shape[1] * 3 // 4:] = 0
    return (tokens, mask.to(device))


def _with_mask(model):
    """`model` called as transformers documents it, the padding mask by
    keyword (`attention_mask=`: it is not the second positional argument
    of every model; GPT-2's is `past_key_values`)."""
    torch = _torch()

    class WithMask(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            return self.model(input_ids=ids, attention_mask=mask)
    return WithMask()


def _randomized(model):
    """Weights that make every part of the model count: a parameter its
    library initializes to (almost) nothing (ViT's zero head, ConvNeXt's
    1e-6 layer scales, zero biases) drawn again, and batch norms given
    running statistics of their own, so the comparison is not of two
    near-zero outputs."""
    torch = _torch()
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() and p.abs().max() < 1e-4:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and \
                    m.running_mean is not None:
                m.running_mean.copy_(
                    torch.randn(m.running_mean.shape, generator=generator)
                    * 0.1)
                m.running_var.copy_(
                    torch.rand(m.running_var.shape, generator=generator)
                    + 0.5)
    return model


def build(name, device="cuda"):
    torch = _torch()
    family, factory, (kind, shape) = MODELS[name]
    torch.manual_seed(0)
    if family == "8b":
        # Made where it runs, in bf16, from the start.
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            with torch.device(device):
                model = factory()
        finally:
            torch.set_default_dtype(default)
    else:
        model = factory()
    model = _randomized(model).to(torch.bfloat16).eval().to(device)
    config = getattr(model, "config", None)
    vocab = getattr(config, "vocab_size", VOCAB) if config else VOCAB
    if kind == "ids+mask":
        model = _with_mask(model).eval()
    return model, inputs_for(kind, shape, device, vocab)


def selected(names):
    if not names:
        return [n for n, m in MODELS.items() if m[0] != "8b"]
    chosen = []
    for item in names.split(","):
        family = [n for n, m in MODELS.items() if m[0] == item]
        if family:
            chosen += family
        elif item in MODELS:
            chosen.append(item)
        else:
            sys.exit("unknown model or family '%s' (models: %s)"
                     % (item, ", ".join(MODELS)))
    return chosen


def export(directory, names=""):
    import einsummable
    rows = []
    for name in selected(names):
        out = os.path.join(directory, name)
        os.makedirs(out, exist_ok=True)
        start = time.time()
        try:
            # Where the GPU is; torchvision's models also trace on the
            # build machine's CPU (transformers is not installed there).
            model, inputs = build(name, "cuda" if _torch().cuda.is_available()
                                  else "cpu")
            exported = einsummable.export(model, inputs)
            exported.write(os.path.join(out, "model.mlir"),
                           os.path.join(out, "frontend.json"))
            rows.append((name, "ok", "%.1fs" % (time.time() - start)))
        except Exception as error:  # report and go on with the others
            rows.append((name, "FAILED", "%s: %s" % (type(error).__name__,
                                                     str(error)[:3000])))
        print("export", *rows[-1], flush=True)
    _table("export", rows)


def compile_all(directory, names=""):
    compiler = os.path.join(os.environ.get("EIN_BUILD_DIR",
                                           os.path.join(ROOT, "build")),
                            "bin", "ein-compile")
    rows = []
    for name in selected(names):
        src = os.path.join(directory, name, "model.mlir")
        if not os.path.exists(src):
            rows.append((name, "not exported", ""))
            continue
        start = time.time()
        done = subprocess.run([compiler, src, "-o",
                               os.path.join(directory, name, "bundle"),
                               "--target=cuda", "--devices=1"],
                              capture_output=True, text=True)
        rows.append((name, "ok" if done.returncode == 0 else "FAILED",
                     "%.1fs" % (time.time() - start) if done.returncode == 0
                     else done.stderr.strip()[-1500:]))
        print("compile", *rows[-1], flush=True)
    _table("compile", rows)


def _flat(out):
    torch = _torch()
    if isinstance(out, torch.Tensor):
        return [("out", out)]
    if isinstance(out, dict):
        return [(k, v) for k, v in out.items() if isinstance(v, torch.Tensor)]
    return [("out%d" % i, v) for i, v in enumerate(out)]


def _error(got, want):
    """The largest |got - want| over every output, divided by
    max(1, max|want|) (inf where it is not a number)."""
    worst = 0.0
    for (_, g), (_, w) in zip(got, want):
        w = w.float()
        err = ((g.float() - w).abs().max() /
               w.abs().max().clamp(min=1)).item()
        worst = max(worst, err if err == err else float("inf"))
    return worst


def _each_bundle(step, directory, names, measure):
    """For each selected model with a bundle: the module built, its bundle
    loaded bound to it, and `measure(model, inputs, compiled)` giving the
    row's verdict and detail (it may close `compiled` early; closing twice
    does nothing). A model without a bundle or whose steps fail gets a row
    saying so; each row is printed as it comes, the table last."""
    torch = _torch()
    import einsummable
    rows = []
    for name in selected(names):
        bundle = os.path.join(directory, name, "bundle")
        if not os.path.isdir(bundle):
            rows.append((name, "no bundle", ""))
            continue
        try:
            model, inputs = build(name)
            compiled = einsummable.load(
                bundle, model,
                frontend=os.path.join(directory, name, "frontend.json"))
            try:
                rows.append((name,) + measure(model, inputs, compiled))
            finally:
                compiled.close()
            del model, compiled
            torch.cuda.empty_cache()
        except Exception as error:
            rows.append((name, "FAILED", "%s: %s" % (type(error).__name__,
                                                     str(error)[:1500])))
        print(step, *rows[-1], flush=True)
    _table(step, rows)


def run(directory, names=""):
    torch = _torch()

    def measure(model, inputs, compiled):
        got = _flat(compiled(*inputs))
        compiled.close()
        with torch.no_grad():
            want = _flat(model(*inputs))
        if [k for k, _ in got] != [k for k, _ in want]:
            raise RuntimeError("outputs %s, the module's %s" % (
                [k for k, _ in got], [k for k, _ in want]))
        # The same module in f32 (its bf16 weights widened) is the
        # reference both bf16 answers are measured against.
        model.float()
        with torch.no_grad():
            exact = _flat(model(*[x.float() if x.is_floating_point()
                                  else x for x in inputs]))
        ours = _error(got, exact)
        eager = _error(want, exact)
        scale = max(w.abs().max().item() for _, w in exact)
        right = ours < 2e-2 or ours <= 2 * eager
        return ("ok" if right else "WRONG",
                "%.2e (module in bf16: %.2e; vs bf16 module %.2e; max "
                "|reference| %.3g)" % (ours, eager, _error(got, want), scale))
    _each_bundle("run", directory, names, measure)


# The peers `bench` times besides the module eager: torch.compile in these
# modes (EIN_PEER_MODES, a comma list, to choose), each replayed from a CUDA
# graph as the eager module is (max-autotune without its own CUDA graphs, so
# that one graph replays it as it replays every peer).
PEER_MODES = ("default", "max-autotune-no-cudagraphs")


def bench(directory, names=""):
    """ein's median step (Compiled.bench) against the module's, eager and
    through torch.compile in each of PEER_MODES, every one replayed from a
    CUDA graph, in one process on one GPU. The ratio is the best peer's
    time over ein's (above 1: ein is faster); a table last, with the
    geomean of the ratios."""
    import math
    torch = _torch()
    sys.path.insert(0, HERE)
    from cuda_events import graphed
    modes = [m for m in os.environ.get("EIN_PEER_MODES",
                                       ",".join(PEER_MODES)).split(",") if m]
    ratios = []

    def measure(model, inputs, compiled):
        compiled(*inputs)  # bench() times steps on the last call's inputs
        ours = compiled.bench(10, 50)
        compiled.close()  # its memory freed before the peers run
        torch.cuda.empty_cache()
        peers = {"eager": graphed(lambda: model(*inputs))}
        for mode in modes:
            torch._dynamo.reset()
            peer = torch.compile(model, mode=mode, dynamic=False)
            peers[mode] = graphed(lambda: peer(*inputs))
        timed = {k: v for k, v in peers.items() if v is not None}
        if not timed:
            raise RuntimeError("no peer could be captured in a CUDA graph")
        best = min(timed, key=timed.get)
        ratios.append(timed[best] / ours)
        return ("%.3fx" % ratios[-1], "ein %.3f ms; %s; best %s" % (
            ours, ", ".join("%s %s" % (k, "n/a" if v is None else "%.3f" % v)
                            for k, v in peers.items()), best))
    _each_bundle("bench", directory, names, measure)
    if ratios:
        print("geomean %.3fx over %d models (best of eager and torch.compile "
              "%s, each from a CUDA graph)" % (
                  math.exp(sum(map(math.log, ratios)) / len(ratios)),
                  len(ratios), "/".join(modes)))


def _table(step, rows):
    print("\n%-20s %-8s %s" % ("model", step, "detail"))
    for name, verdict, detail in rows:
        print("%-20s %-8s %s" % (name, verdict,
                                 detail.splitlines()[0][:160] if detail
                                 else ""))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or \
            sys.argv[1] not in ("export", "compile", "run", "bench"):
        sys.exit(__doc__)
    {"export": export, "compile": compile_all, "run": run,
     "bench": bench}[sys.argv[1]](
        *sys.argv[2:])
