#!/usr/bin/env python3
"""Training steps on one GPU in bf16, ein against PyTorch, in two steps
across two machines (the build machine has the compiler, the GPU machine
PyTorch with CUDA):

  here:  python3 bench/training_gpu.py compile DIR [NAMES]  # compile_training
  there: python3 bench/training_gpu.py run DIR [NAMES]      # load, train, time

Each model is built from a fixed seed on both machines in bf16 (the test
models of python/tests/models.py at larger sizes): `llama` is a LLaMA-style
block (RMSNorm, RoPE, GQA causal attention, SwiGLU) under MSE, `lm` a
2-layer causal language model with tied embeddings under cross-entropy.
`compile` runs einsummable.compile_training(target="cuda") with AdamW
(f32 moments) into DIR/NAME. `run` binds each bundle with
einsummable.load_training, trains STEPS steps on fixed batches and
measures every step's loss and, after sync(), every weight against
PyTorch training the same model in f32 on the GPU (its bf16 weights
widened, torch.optim.AdamW): the error is |ein - f32| over max(1, |f32|)
for losses and max|ein - f32| over max|f32| per weight, shown beside
PyTorch's own bf16 training's (bf16 weights and moments, the same
optimizer); right where ein's is under 2e-2 or at most twice PyTorch
bf16's. Then it times a step (forward, backward, AdamW): ein's
Trainer.step (the batch copied in, the loss read back, the updated weights
and moments carried on the GPU), PyTorch eager (fused AdamW) and
torch.compile'd (model and loss compiled, fused AdamW), each the median of
TIMED steps after warm-up, synchronised on the host. A table last.
"""

import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

STEPS = 5
WARMUP, TIMED = 5, 30


def _torch():
    import torch
    return torch


class TokenLoss:
    """Cross-entropy over every token of [batch, tokens, vocab] logits."""

    def __call__(self, logits, target):
        torch = _torch()
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def build(name):
    """(model in bf16, loss_fn, batches): the same on both machines."""
    torch = _torch()
    import models
    torch.manual_seed(0)
    if name == "llama":
        model = models.LlamaBlock(d=512, heads=8, kv_heads=4, ffn=1408,
                                  seq=256)
        loss = torch.nn.MSELoss()
        batches = [(torch.randn(4, 256, 512), torch.randn(4, 256, 512))
                   for _ in range(STEPS)]
    elif name == "lm":
        model = models.CausalLM(vocab=2048, d=256, heads=4, layers=2,
                                ctx=128)
        loss = TokenLoss()
        batches = [(torch.randint(0, 2048, (4, 128)),
                    torch.randint(0, 2048, (4, 128))) for _ in range(STEPS)]
    else:
        raise SystemExit("unknown model %r (llama, lm)" % name)
    model = model.to(torch.bfloat16).eval()
    batches = [tuple(t.to(torch.bfloat16) if t.is_floating_point() else t
                     for t in b) for b in batches]
    return model, loss, batches


def optimizer_for(parameters):
    torch = _torch()
    return torch.optim.AdamW(parameters, lr=1e-3, weight_decay=0.01)


def compile_all(directory, names):
    import einsummable
    for name in names:
        model, loss, batches = build(name)
        began = time.time()
        trainer = einsummable.compile_training(
            model, loss, batches[0], optimizer=optimizer_for(
                model.parameters()), target="cuda",
            workdir=os.path.join(directory, name))
        trainer.close()
        print("%s: compiled in %.1f s into %s" % (name, time.time() - began,
                                                   trainer.bundle),
              flush=True)


def torch_training(model, loss_fn, batches, dtype, fused):
    """PyTorch's own loop on the GPU: losses and final weights."""
    import copy
    torch = _torch()
    model = copy.deepcopy(model).to("cuda", dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3,
                                  weight_decay=0.01, fused=fused)
    losses = []
    for batch in batches:
        batch = [t.to("cuda", dtype) if t.is_floating_point() else
                 t.to("cuda") for t in batch]
        optimizer.zero_grad()
        loss = loss_fn(model(*batch[:-1]), batch[-1])
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses, model


def step_ms(step):
    torch = _torch()
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(TIMED):
        began = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - began) * 1e3)
    return statistics.median(times)


def torch_step(model, loss_fn, batch, compiled):
    import copy
    torch = _torch()
    model = copy.deepcopy(model).to("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3,
                                  weight_decay=0.01, fused=True)
    batch = [t.to("cuda") for t in batch]
    forward = (lambda *a: loss_fn(model(*a[:-1]), a[-1]))
    if compiled:
        forward = torch.compile(forward)

    def step():
        optimizer.zero_grad(set_to_none=True)
        forward(*batch).backward()
        optimizer.step()
    return step


def run_all(directory, names):
    import einsummable
    torch = _torch()
    rows = []
    for name in names:
        model, loss_fn, batches = build(name)
        reference_losses, reference = torch_training(
            model, loss_fn, batches, torch.float32, fused=False)
        bf16_losses, bf16 = torch_training(model, loss_fn, batches,
                                           torch.bfloat16, fused=True)
        mine = build(name)[0]
        optimizer = optimizer_for(mine.parameters())
        trainer = einsummable.load_training(
            os.path.join(directory, name, "bundle"), mine, loss_fn,
            optimizer=optimizer)
        losses = [float(trainer.step(*b)) for b in batches]
        trainer.sync()

        def loss_error(got):
            return max(abs(g - w) / max(1.0, abs(w))
                       for g, w in zip(got, reference_losses))

        def weight_error(got):
            worst = 0.0
            for (n, p), q in zip(got.named_parameters(),
                                 reference.parameters()):
                p = p.detach().float().cpu()
                q = q.detach().float().cpu()
                worst = max(worst, float((p - q).abs().max()) /
                            max(1e-6, float(q.abs().max())))
            return worst
        ein_loss, ein_weight = loss_error(losses), weight_error(mine)
        torch_loss, torch_weight = loss_error(bf16_losses), weight_error(bf16)
        right = all(e < 2e-2 or e <= 2 * t for e, t in
                    ((ein_loss, torch_loss), (ein_weight, torch_weight)))
        print("%s: losses ein %s, f32 %s, torch bf16 %s" % (
            name, ["%.4f" % x for x in losses],
            ["%.4f" % x for x in reference_losses],
            ["%.4f" % x for x in bf16_losses]), flush=True)

        batch = batches[0]
        ein_ms = step_ms(lambda: trainer.step(*batch))
        trainer.close()
        eager_ms = step_ms(torch_step(model, loss_fn, batch, False))
        try:
            compiled_ms = step_ms(torch_step(model, loss_fn, batch, True))
        except Exception as error:  # report, keep the other numbers
            print("%s: torch.compile failed: %s" % (name, error))
            compiled_ms = math.nan
        best = min(eager_ms, compiled_ms) if not math.isnan(compiled_ms) \
            else eager_ms
        rows.append((name, ein_loss, torch_loss, ein_weight, torch_weight,
                     "yes" if right else "NO", ein_ms, eager_ms, compiled_ms,
                     best / ein_ms))
        print("%s: step ein %.3f ms, eager %.3f ms, torch.compile %.3f ms"
              % (name, ein_ms, eager_ms, compiled_ms), flush=True)
    print("\n| model | loss err ein | loss err torch bf16 | weight err ein "
          "| weight err torch bf16 | right | ein ms | eager ms | "
          "compile ms | ein vs best |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.2e | %.2e | %.2e | %.2e | %s | %.3f | %.3f | %.3f "
              "| %.2fx |" % r)
    return all(r[5] == "yes" for r in rows)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("compile", "run"):
        raise SystemExit(__doc__)
    directory = os.path.abspath(sys.argv[2])
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else ["llama", "lm"]
    if sys.argv[1] == "compile":
        compile_all(directory, names)
    else:
        sys.exit(0 if run_all(directory, names) else 1)


if __name__ == "__main__":
    main()
