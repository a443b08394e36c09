#!/usr/bin/env python3
"""The Python front end on real library code, in three steps across two
machines (the GPU machines have PyTorch 2 and transformers but no LLVM;
this one has the compiler):

  there: python3 bench/frontend_gpu.py export DIR [NAMES]  # trace, write linalg
  here:  python3 bench/frontend_gpu.py compile DIR [NAMES] # ein-compile for CUDA
  there: python3 bench/frontend_gpu.py run DIR [NAMES]     # load, compare, time

(NAMES: a comma list of the models below; all when left out.)

Models, each built from a fixed seed on both machines: transformers'
LlamaDecoderLayer (with its rotary embedding) and GPT2Block, small and at
real sizes (Llama 3 8B, GPT-2), and the benchmark LLaMA block w1 written as
an nn.Module (python/tests/models.py), whose bundle is timed against the
same block compiled from examples/gen_llama_block.py in the same run.
`run` prints one line per model: the error against the module's own output
(bf16: must be under 2e-2 of max(1, max|ref|)) and, for the timed ones, the
bundle's median step against the module's, eager and through torch.compile,
and for w1 the gen_llama_block bundle's; the module's times are also taken
replaying a CUDA graph of it (eager and compiled), as the peers time
PyTorch.
"""

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))


def _torch():
    import torch
    return torch


def hf_llama(hidden, inter, heads, kv):
    torch = _torch()
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as m

    config = LlamaConfig(hidden_size=hidden, intermediate_size=inter,
                         num_attention_heads=heads, num_key_value_heads=kv,
                         max_position_embeddings=8192, rms_norm_eps=1e-5,
                         attn_implementation="sdpa")

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rope = m.LlamaRotaryEmbedding(config)
            self.layer = m.LlamaDecoderLayer(config, layer_idx=0)

        def forward(self, x):
            positions = torch.arange(x.shape[1], device=x.device)[None]
            out = self.layer(x, attention_mask=None, position_ids=positions,
                             position_embeddings=self.rope(x, positions))
            return out[0] if isinstance(out, tuple) else out
    return Layer


def hf_gpt2(hidden, heads):
    torch = _torch()
    from transformers import GPT2Config
    from transformers.models.gpt2 import modeling_gpt2 as m

    config = GPT2Config(n_embd=hidden, n_head=heads, n_positions=4096,
                        attn_implementation="sdpa")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = m.GPT2Block(config, layer_idx=0)

        def forward(self, x):
            out = self.block(x)
            return out[0] if isinstance(out, tuple) else out
    return Block


def bench_block():
    import models
    return lambda: models.LlamaBlock(d=4096, heads=32, kv_heads=8,
                                     ffn=14336, seq=8192)


# name: (factory, input shape)
MODELS = {
    "hf-llama-small": (lambda: hf_llama(256, 688, 8, 2), (2, 256, 256)),
    "hf-llama-8b": (lambda: hf_llama(4096, 14336, 32, 8), (1, 2048, 4096)),
    "hf-gpt2-small": (lambda: hf_gpt2(256, 8), (2, 256, 256)),
    "hf-gpt2": (lambda: hf_gpt2(768, 12), (1, 1024, 768)),
    "hf-gpt2-b8": (lambda: hf_gpt2(768, 12), (8, 1024, 768)),
    "llama-w1": (bench_block, (1, 8192, 4096)),
}


def build(name):
    """The seeded model (bf16, eval, on the GPU) and its seeded input."""
    torch = _torch()
    factory, shape = MODELS[name]
    cls = factory()
    torch.manual_seed(0)
    model = cls().to(torch.bfloat16).eval().cuda()
    torch.manual_seed(1)
    x = torch.randn(*shape).to(torch.bfloat16).cuda()
    return model, x


def selected(names):
    """The models named in a comma list (all when empty)."""
    if not names:
        return list(MODELS)
    chosen = names.split(",")
    for name in chosen:
        if name not in MODELS:
            sys.exit("unknown model '%s' (one of %s)" % (name,
                                                        ", ".join(MODELS)))
    return chosen


def export(directory, names=""):
    import einsummable
    os.makedirs(directory, exist_ok=True)
    for name in selected(names):
        out = os.path.join(directory, name)
        os.makedirs(out, exist_ok=True)
        start = time.time()
        try:
            model, x = build(name)
            exported = einsummable.export(model, (x,))
            exported.write(os.path.join(out, "model.mlir"),
                           os.path.join(out, "frontend.json"))
            print("export %-15s ok %.1fs" % (name, time.time() - start),
                  flush=True)
        except Exception as error:  # report and go on with the others
            print("export %-15s FAILED %s: %s" % (name, type(error).__name__,
                                                  str(error)[:2000]),
                  flush=True)


def compile_all(directory, names=""):
    compiler = os.path.join(ROOT, "build", "bin", "ein-compile")
    for name in selected(names):
        src = os.path.join(directory, name, "model.mlir")
        if not os.path.exists(src):
            continue
        bundle = os.path.join(directory, name, "bundle")
        done = subprocess.run([compiler, src, "-o", bundle, "--target=cuda",
                               "--devices=1"], capture_output=True, text=True)
        print("compile %-15s %s" % (name, "ok" if done.returncode == 0 else
                                    "FAILED\n" + done.stderr[-3000:]))
    gen = os.path.join(directory, "gen-w1.mlir")
    with open(gen, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                     "gen_llama_block.py"),
                        "--workload", "w1-l3-8b-b1-s8k", "--dtype", "bf16",
                        "--rope", "halves"], check=True, stdout=f)
    done = subprocess.run([compiler, gen, "-o",
                           os.path.join(directory, "gen-w1"),
                           "--target=cuda", "--devices=1"],
                          capture_output=True, text=True)
    print("compile gen-w1          %s" % ("ok" if done.returncode == 0
                                          else "FAILED\n" + done.stderr))


# The models whose bundles are timed against the module itself, eager and
# through torch.compile (Inductor), on the same GPU in the same run.
TIMED = ("hf-llama-8b", "hf-gpt2", "hf-gpt2-b8", "llama-w1")


def time_module(model, x, warmup=5, iters=20):
    """Median ms of model(x) by CUDA events (after warm-up, which for a
    torch.compile'd module includes its compilation)."""
    from cuda_events import timed
    with _torch().no_grad():
        return timed(lambda: model(x), warmup, iters)


def time_graphed(model, x, warmup=10, iters=50):
    """Median ms of one replay of a CUDA graph of model(x)
    (cuda_events.graphed); None if capture fails."""
    from cuda_events import graphed
    return graphed(lambda: model(x), warmup, iters)


def run(directory, names=""):
    torch = _torch()
    import einsummable
    rows = []
    for name in selected(names):
        bundle = os.path.join(directory, name, "bundle")
        if not os.path.isdir(bundle):
            rows.append((name, "no bundle", "", ""))
            continue
        try:
            model, x = build(name)
            with torch.no_grad():
                want = model(x).float()
            compiled = einsummable.load(
                bundle, model,
                frontend=os.path.join(directory, name, "frontend.json"))
            got = compiled(x).float()
            err = ((got - want).abs().max() /
                   want.abs().max().clamp(min=1)).item()
            verdict = "ok" if err < 2e-2 else "WRONG"
            ms = ""
            if name in TIMED:
                ein = compiled.bench(10, 50)
                eager = time_module(model, x)
                inductor = torch.compile(model)
                compiled_ms = time_module(inductor, x)
                # The same two replayed from a CUDA graph (the peers' form).
                eager_graph = time_graphed(model, x)
                compiled_graph = time_graphed(inductor, x)
                fmt = lambda v: "n/a" if v is None else "%.3f" % v
                ms = ("%.3f (module eager %.3f, torch.compile %.3f; in a "
                      "CUDA graph: eager %s, torch.compile %s)" % (
                          ein, eager, compiled_ms, fmt(eager_graph),
                          fmt(compiled_graph)))
            rows.append((name, verdict, "%.2e" % err, ms))
            compiled.close()
            del model, compiled
            torch.cuda.empty_cache()
        except Exception as error:
            rows.append((name, "FAILED", "%s: %s" % (type(error).__name__,
                                                     str(error)[:1500]), ""))
        print(rows[-1], flush=True)
    gen = os.path.join(directory, "gen-w1")
    if os.path.isdir(gen) and not names:
        done = subprocess.run([os.path.join(ROOT, "build", "bin", "ein-run"),
                               gen, "--bench", "--warmup=10", "--iters=50"],
                              capture_output=True, text=True)
        found = re.search(r"median_ms=([0-9.]+)", done.stdout)
        rows.append(("gen-w1 (ein dialect)", "ok" if found else "FAILED",
                     "", found.group(1) if found else done.stderr[-500:]))
    print("\n%-22s %-8s %-12s %s" % ("model", "result", "max_rel_err",
                                     "median_ms"))
    for row in rows:
        print("%-22s %-8s %-12s %s" % row)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or \
            sys.argv[1] not in ("export", "compile", "run"):
        sys.exit(__doc__)
    {"export": export, "compile": compile_all, "run": run}[sys.argv[1]](
        *sys.argv[2:])
