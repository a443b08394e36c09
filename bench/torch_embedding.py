#!/usr/bin/env python3
"""F.embedding at GPT-2 size (vocabulary 50257 x 768 bf16, 8 x 1024 ids):
the peer of the bench/gather_gpt2.mlir bundle, timed by CUDA events around
eager calls (median of 50 after 10; bench/cuda_events.py)."""
import torch
import torch.nn.functional as F

from cuda_events import timed

table = torch.randn(50257, 768, device="cuda", dtype=torch.bfloat16)
ids = torch.randint(0, 50257, (8, 1024), device="cuda")
print("F.embedding median_ms=%.4f" % timed(lambda: F.embedding(ids, table),
                                          10, 50))
