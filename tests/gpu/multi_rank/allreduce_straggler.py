"""All-reduce job with a planted straggler, for tests/gpu/multi_rank/run.sh.

Run by torchrun, one process per GPU. Every rank runs --steps all-reduces of a
float32 tensor between matmuls; before all-reduce number --late (1-based) all
ranks synchronize their GPU, then rank --slow-rank sleeps --delay-ms, so its
NCCL kernel starts that much after the others'. Prints what it did as
KEY=VALUE lines for the checker.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--late", type=int, default=2)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--delay-ms", type=float, default=50.0)
    p.add_argument("--size", type=int, default=1 << 20)
    args = p.parse_args()
    if not 2 <= args.late <= args.steps:
        p.error("--late must be between 2 and --steps: the ranks line up on the all-reduce before it")

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)

    a = torch.randn(512, 512, device=device)
    x = torch.ones(args.size, device=device)
    # No barrier anywhere: it would add an all-reduce kernel of its own. The
    # synchronize before the late step suffices: the previous all-reduce ended
    # on every GPU together, so the ranks leave it together, up to CPU jitter.
    for step in range(1, args.steps + 1):
        a = a @ a
        a = a / a.norm()
        if step == args.late:
            torch.cuda.synchronize()
            if rank == args.slow_rank:
                time.sleep(args.delay_ms / 1000.0)
        dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank={rank} allreduce_steps={args.steps} late={args.late} "
          f"slow_rank={args.slow_rank} delay_ms={args.delay_ms}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
