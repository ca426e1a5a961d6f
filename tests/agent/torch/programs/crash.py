# Some ops, then a fatal signal: the ops finished before it are in the spool.
import os

import torch

x = torch.ones(4)
for _ in range(10):
    x = x.add(1)
with torch.autograd.profiler.record_function("open_at_crash"):
    x.mul(3)
    os.kill(os.getpid(), 11)
