"""Planted: `.item()` in the training loop, an implicit sync per step (rule gpu.launch_sync).

10,000 steps of a small recurrent update on the GPU (h = tanh(h @ W), 512 x 1024,
FP32) that log the step's loss. The planted variant logs loss.item(): a
device-to-host copy that waits for the GPU every step, so the GPU then idles
while the host launches the next step. --fixed keeps the losses on the device and
copies them all once at the end (torch.stack(...).tolist()): the same values,
summed in the same order on the host.
"""
import sys

from planted_py import Timer, import_torch_cuda, parse_args, print_result, scaled

NAME = "torch_item_sync"
STEPS = 10_000
BATCH, WIDTH = 512, 1024


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    torch = import_torch_cuda(NAME)
    generator = torch.Generator(device="cuda").manual_seed(0)
    h = torch.rand(BATCH, WIDTH, device="cuda", generator=generator)
    w = torch.randn(WIDTH, WIDTH, device="cuda", generator=generator) / WIDTH ** 0.5
    torch.tanh(h @ w).mean().item()  # warm-up: cuBLAS handle and kernels load lazily

    losses = []
    with Timer() as timer:
        for _ in range(scaled(STEPS, args)):
            h = torch.tanh(h @ w)
            loss = h.mean()
            # The planted cause: .item() copies to the host and waits for the GPU.
            losses.append(loss if args.fixed else loss.item())
        if args.fixed:
            losses = torch.stack(losses).tolist()
        torch.cuda.synchronize()
    print_result(NAME, args, timer, repr(sum(losses)))


if __name__ == "__main__":
    main(sys.argv[1:])
