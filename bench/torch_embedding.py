# F.embedding at GPT-2 size (vocab 50257 x 768 bf16, 8 x 1024 ids), timed by
# CUDA events (median of 50 after 10), the peer of the gather-gpt2 bundle.
import torch, torch.nn.functional as F
t = torch.randn(50257, 768, device="cuda", dtype=torch.bfloat16)
i = torch.randint(0, 50257, (8, 1024), device="cuda")
times = []
for k in range(60):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); F.embedding(i, t); b.record(); torch.cuda.synchronize()
    if k >= 10: times.append(a.elapsed_time(b))
times.sort(); print("F.embedding median_ms=%.4f" % times[len(times) // 2])
