"""Healthy: a large batched matrix product in PyTorch, nothing planted (no finding).

100 calls of torch.bmm on 16 products of 4096 x 4096 BF16 matrices, inputs made
on the device, one op per iteration, no sync or copy in the loop: the GPU is busy
from the first product to the last. --fixed is accepted and runs the same thing.
"""
import sys

from planted_py import Timer, import_torch_cuda, parse_args, print_result, scaled

NAME = "torch_healthy_bmm"
CALLS = 100
BATCH, SIDE = 16, 4096


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    torch = import_torch_cuda(NAME)
    generator = torch.Generator(device="cuda").manual_seed(0)
    shape = (BATCH, SIDE, SIDE)
    a = torch.randn(shape, device="cuda", generator=generator, dtype=torch.bfloat16)
    b = torch.randn(shape, device="cuda", generator=generator, dtype=torch.bfloat16)
    out = torch.bmm(a, b)  # warm-up: cuBLAS loads lazily
    torch.cuda.synchronize()
    with Timer() as timer:
        for _ in range(scaled(CALLS, args)):
            torch.bmm(a, b, out=out)
        checksum = out.sum(dtype=torch.float64).item()
    print_result(NAME, args, timer, repr(checksum))


if __name__ == "__main__":
    main(sys.argv[1:])
