#!/usr/bin/env python3
"""Probe behind runtime/lib/cuda/gemm_pad.h: bf16 torch.matmul with ragged
dimensions, as it is and with leading dimensions padded to a multiple of 64
(bench/results/2026-11-30-ragged-gemm-h200x2.md)."""
import torch, time
def t(f, iters=20):
    for _ in range(3): f()
    torch.cuda.synchronize()
    s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
    ts=[]
    for _ in range(iters):
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
def padded(x, mult=64):
    r,c=x.shape; cp=(c+mult-1)//mult*mult
    buf=torch.empty(r,cp,dtype=x.dtype,device=x.device); buf[:,:c]=x; return buf[:,:c]
for (M,K,N) in [(8192,8192,8192),(8191,8191,8191),(8192,8191,8192),(8192,8192,8191),(4096,14336,2049),(16384,4097,4096),(97,131,113),(4096,4095,4096)]:
    a=torch.randn(M,K,device='cuda',dtype=torch.bfloat16); b=torch.randn(K,N,device='cuda',dtype=torch.bfloat16)
    ap=padded(a); bp=padded(b); cp=padded(torch.empty(M,N,device='cuda',dtype=torch.bfloat16))
    t0=t(lambda: torch.matmul(a,b))
    t1=t(lambda: torch.mm(ap,bp,out=None))
    tc=t(lambda: (ap.copy_(a), bp.copy_(b)))
    fl=2*M*N*K
    print(f"{M}x{K}x{N}: plain {t0:.3f} ms {fl/t0/1e9:.0f} TF/s | padded operands {t1:.3f} ms {fl/t1/1e9:.0f} TF/s | pad copies {tc:.3f} ms", flush=True)
