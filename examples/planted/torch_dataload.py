"""Planted: CPU-side data loading between GPU steps (rule gpu.host_between_launches).

80 training-like steps. Each batch (64 images, 3 x 64 x 64) is made on the CPU
with torch ops, as a dataset's transforms do: random bytes, scale, normalize,
a 3x3 box blur, a flip of every other image, pinned for the upload. The GPU step
(a projection and four 1024 x 4096 x 4096 layers, ~3 ms on an H200) is shorter
than making the batch (~10 ms on one core), so in the planted variant, which makes
each batch in the loop, the GPU waits for the CPU most of the time. --fixed makes
the same batches, in order, on 8 worker threads ahead of the loop (what a
DataLoader with workers does; torch's CPU ops release the GIL), so making batch
i+1 overlaps step i. Every op runs single-threaded (torch.set_num_threads(1)) in
both variants: the same batches, the same results. Both fix glibc's malloc
thresholds first (planted_py.steady_heap): with its defaults, some processes of
this loop fault its 3 MiB tensors in anew on every batch and run twice as long.
"""
import sys
from concurrent.futures import ThreadPoolExecutor

from planted_py import Timer, import_torch_cuda, parse_args, print_result, scaled, steady_heap

NAME = "torch_dataload"
STEPS = 80
WORKERS = 8
BATCH, CHANNELS, SIDE = 64, 3, 64
HIDDEN, LAYERS, REPLICAS = 4096, 4, 16


def make_loader(torch, pin=True):
    """load_batch(index): batch `index`, made with torch CPU ops; pinned for the upload
    unless pin is False (bench/heap_modes_cpu.py runs this on a machine without CUDA)."""
    import torch.nn.functional as F
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

    def load_batch(index):
        generator = torch.Generator().manual_seed(index)
        raw = torch.randint(0, 256, (BATCH, CHANNELS, SIDE, SIDE), generator=generator,
                            dtype=torch.uint8)
        x = (raw.float().div_(255.0) - mean) / std
        x = F.avg_pool2d(x, 3, stride=1, padding=1)
        x[::2] = x[::2].flip(-1)
        x = x.reshape(BATCH, -1)
        return x.pin_memory() if pin else x

    return load_batch


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    steady_heap()
    torch = import_torch_cuda(NAME)
    torch.set_num_threads(1)
    load_batch = make_loader(torch)
    generator = torch.Generator(device="cuda").manual_seed(0)
    features = CHANNELS * SIDE * SIDE
    w_in = torch.randn(features, HIDDEN, device="cuda", generator=generator) / features ** 0.5
    layers = [torch.randn(HIDDEN, HIDDEN, device="cuda", generator=generator) / HIDDEN ** 0.5
              for _ in range(LAYERS)]

    def step(batch):
        h = (batch.to("cuda", non_blocking=True) @ w_in).repeat(REPLICAS, 1)
        for w in layers:
            h = torch.tanh(h @ w)
        return h.sum(dtype=torch.float64)

    step(load_batch(10 ** 6)).item()  # warm-up: cuBLAS and the kernels load lazily
    steps = scaled(STEPS, args)
    total = torch.zeros((), dtype=torch.float64, device="cuda")
    with Timer() as timer:
        if args.fixed:
            with ThreadPoolExecutor(WORKERS) as pool:
                for batch in pool.map(load_batch, range(steps)):
                    total += step(batch)
        else:
            for index in range(steps):
                # The planted cause: the GPU waits while the CPU makes the batch.
                total += step(load_batch(index))
        checksum = total.item()
    print_result(NAME, args, timer, repr(checksum))


if __name__ == "__main__":
    main(sys.argv[1:])
