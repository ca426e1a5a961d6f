"""Two processes on one GPU exchanging work, for tests/gpu/multi_rank/run.sh.

Run by torchrun with two processes; both use cuda:0 (NCCL refuses two ranks on
one GPU, so the exchange goes through a gloo process group on the host). Rank r
runs (r + 1) * --per-round in-place adds per round on the GPU, copies a value
back and all-reduces it with the other rank, --rounds times. The kernels each
rank launches are therefore known exactly: one fill (torch.zeros) and
(r + 1) * per_round * rounds element-wise adds; the copies back are memcpys,
not kernels. Prints the expected count as KEY=VALUE for the checker.
"""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--per-round", type=int, default=5)
    args = p.parse_args()

    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    device = torch.device("cuda", 0)
    x = torch.zeros(1 << 16, device=device)  # one fill kernel
    adds = (rank + 1) * args.per_round
    for _ in range(args.rounds):
        for _ in range(adds):
            x.add_(1.0)  # one element-wise kernel each
        v = x[:1].cpu()  # a device-to-host memcpy
        dist.all_reduce(v)  # on the host, through gloo
    torch.cuda.synchronize()
    print(f"rank={rank} expected_kernels={1 + adds * args.rounds}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
