# DataLoader(num_workers=2): each worker (a forked process) records the ops of
# __getitem__ into its own spool; the worker pids go to argv[1]. A subprocess
# (fork + exec) afterwards leaves no spool.
import os
import subprocess
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        with torch.autograd.profiler.record_function("getitem"):
            return torch.full((4,), float(i)).mul(2).add(1), os.getpid()


pids = set()
for batch, worker_pids in DataLoader(Squares(), batch_size=4, num_workers=2):
    pids.update(int(p) for p in worker_pids)
    batch.sum()
# A fork that execs: it must leave no spool of its own.
subprocess.run(["true"], check=True)
with open(sys.argv[1], "w") as out:
    out.write("\n".join(str(p) for p in sorted(pids)))
