# A small training loop as users write it: forward, backward, SGD step under a
# record_function scope; first on a second thread (joined), then on the main
# thread inside a WINDOW scope with torch.profiler (CPU) running over the same
# loop (the INNER scope), whose op names and call counts go to argv[1] ("name\tcount" lines).
import collections
import sys
import threading

import torch
from torch.profiler import ProfilerActivity, profile

torch.manual_seed(0)
device = "cuda" if len(sys.argv) > 2 and sys.argv[2] == "cuda" else "cpu"


def make():
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def train(model, opt, steps, scope):
    x = torch.randn(8, 16, device=device)
    t = torch.randn(8, 4, device=device)
    for _ in range(steps):
        with torch.autograd.profiler.record_function(scope):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), t)
            loss.backward()
            opt.step()


other = threading.Thread(target=lambda: train(*make(), 2, "thread2_step"), name="trainer2")
other.start()
other.join()
model, opt = make()
train(model, opt, 1, "warmup_step")
with torch.autograd.profiler.record_function("WINDOW"):
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        with torch.autograd.profiler.record_function("INNER"):  # the window both sides compare
            train(model, opt, 3, "my_step")
# The profiler's events in the my_step trees (what the profiler's own start and stop run is not the
# program's), counted per name as key_averages() counts them; by tree, not time: the profiler's times
# are whole microseconds.
def in_step(e):
    while e is not None:
        if e.name == "my_step":
            return True
        e = e.cpu_parent
    return False


# torch 1.13's profiler now and then lists one op twice: two events of the same name on one thread
# that overlap without one containing the other (aten::div_ at 1577-1584 and 1579-1585 us), which no
# real pair of calls can do. The later copy is left out, so that the counts are the calls made.
def without_duplicates(events):
    kept, last = [], {}
    for e in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
        prev = last.get((e.thread, e.name))
        if prev is not None and prev.time_range.start < e.time_range.start < prev.time_range.end < e.time_range.end:
            continue
        last[(e.thread, e.name)] = e
        kept.append(e)
    return kept


counts = collections.Counter(e.name for e in without_duplicates(prof.events()) if in_step(e))
with open(sys.argv[1], "w") as out:
    for name in sorted(counts):
        out.write("%s\t%d\n" % (name, counts[name]))
