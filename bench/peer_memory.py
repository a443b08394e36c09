#!/usr/bin/env python3
"""Runs the PyTorch LLaMA-block peer unchanged, one workload at a time in this
process, and reports what each rank's GPU held for it.

    python3 bench/peer_memory.py PEER.py --strategy single --workloads a,b
    python3 -m torch.distributed.run --nproc_per_node=2 bench/peer_memory.py \
        PEER.py --strategy tp --workloads a,b

The peer's main() runs once per workload (its timing lines are printed as
usual); its process group is created once and kept across the calls, as
the peer keeps it across its workloads when run alone. The peer calls torch.cuda.empty_cache() right after timing a
workload, while its weights, input, output and CUDA graph are still alive:
the memory is read there, before the cache is emptied.
- allocated: torch.cuda.max_memory_allocated(), the peak of live tensors;
- reserved: torch.cuda.max_memory_reserved(), the caching allocator's peak;
- device: how far cudaMemGetInfo's free memory dropped since this process
  had its CUDA context and nothing else (the allocator plus what it does not
  see: cuBLAS/cuDNN handles, NCCL's buffers). Like ein-run's "measured".
Prints, per rank and workload:
    memory WORKLOAD STRATEGY RANK allocated_mib reserved_mib device_mib
"""
import gc
import os
import runpy
import sys

import torch
import torch.distributed as dist


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: peer_memory.py PEER.py [peer options] --workloads a,b")
    peer, args = sys.argv[1], sys.argv[2:]
    if "--workloads" not in args:
        sys.exit("peer_memory.py: give --workloads explicitly")
    at = args.index("--workloads")
    workloads = args[at + 1].split(",")
    strategy = args[args.index("--strategy") + 1] if "--strategy" in args else "single"
    rank = int(os.environ.get("RANK", "0"))
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.init()
    free_at_start = torch.cuda.mem_get_info()[0]
    peer_main = runpy.run_path(peer, run_name="peer")["main"]
    init, destroy = dist.init_process_group, dist.destroy_process_group
    dist.init_process_group = lambda *a, **k: None if dist.is_initialized() else init(*a, **k)
    dist.destroy_process_group = lambda *a, **k: None
    empty_cache = torch.cuda.empty_cache
    mib = 1 << 20
    for name in workloads:
        def sample():
            device = free_at_start - torch.cuda.mem_get_info()[0]
            # One write per line: the ranks share the launcher's stdout.
            sys.stdout.write(f"memory {name} {strategy} {rank} "
                             f"{torch.cuda.max_memory_allocated() / mib:.1f} "
                             f"{torch.cuda.max_memory_reserved() / mib:.1f} "
                             f"{device / mib:.1f}\n")
            sys.stdout.flush()
            empty_cache()
        torch.cuda.empty_cache = sample
        sys.argv = [peer] + args[:at] + ["--workloads", name] + args[at + 2:]
        try:
            peer_main()
        finally:
            torch.cuda.empty_cache = empty_cache
        gc.collect()
        empty_cache()
        torch.cuda.reset_peak_memory_stats()
    if dist.is_initialized():
        destroy()


if __name__ == "__main__":
    main()
