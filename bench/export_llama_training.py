#!/usr/bin/env python3
"""Exports the loss of a LLaMA-style block (python/tests/models.py's
LlamaBlock at hidden 1024, 16 heads, 8 KV heads, FFN 2816, batch 8 x 512
tokens, bf16) under MSE, its parameters marked {ein.weight} and its
buffers not, for `ein-compile --gradients` (the training step's plan,
docs/training.md):

  python3 bench/export_llama_training.py OUT.mlir
  ein-compile OUT.mlir -o B --gradients --devices=8 --target=cuda \
      --strategy=optimal|dp|megatron --explain=E.json
"""

import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))

import einsummable  # noqa: E402
import models  # noqa: E402


class WithLoss(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model, self.loss = model, nn.MSELoss()

    def forward(self, x, y):
        return self.loss(self.model(x), y)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    torch.manual_seed(0)
    module = WithLoss(models.LlamaBlock(d=1024, heads=16, kv_heads=8,
                                        ffn=2816, seq=512))
    module = module.to(torch.bfloat16).eval()
    x = torch.randn(8, 512, 1024, dtype=torch.bfloat16)
    trained = {"model." + n for n, _ in module.model.named_parameters()}
    exported = einsummable.export(module, (x, x.clone()),
                                  marked=lambda a: a["name"] in trained)
    out = os.path.abspath(sys.argv[1])
    exported.write(out, os.path.splitext(out)[0] + ".json")


if __name__ == "__main__":
    main()
