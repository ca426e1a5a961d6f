#!/usr/bin/env python3
"""A small training loop: an MLP on random data, `steps` times forward, loss,
backward and an optimizer step — the kind of program the op table is for.

  python3 torch_train.py --device cuda --steps 20
  device=cuda steps=20 batch=64 width=512 elapsed_ms=12.345 loss=1.234567

elapsed_ms covers the timed steps only (after one untimed warm-up step), from
the first forward to the last optimizer step complete on the device.

--probe (for bench/torch_ops_overhead.py) also prints probe_ms: a fixed
pure-Python loop timed just before the steps, in which no profiler records
anything, so it says how fast this process's CPU ran (as in
bench/torch_workloads/small_ops.py).
"""

import argparse
import sys
import time


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="torch_train.py", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=20)
    parser.add_argument("--batch", type=positive_int, default=64)
    parser.add_argument("--width", type=positive_int, default=512)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probe", action="store_true",
                        help="also time a fixed pure-Python loop before the steps (probe_ms)")
    return parser.parse_args(argv)


def cpu_probe_ms():
    """The time of a fixed pure-Python loop (small_ops.py's probe), in ms."""
    start = time.perf_counter()
    total = 0
    for i in range(300_000):
        total += i * i
    return (time.perf_counter() - start) * 1000.0


def main(argv):
    args = parse_args(argv)
    try:
        import torch
    except ImportError as error:
        print(f"torch_train.py: PyTorch is needed: {error}", file=sys.stderr)
        return 1
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_train.py: torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 10)).to(device)
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs = torch.randn(args.batch, args.width, device=device)
    targets = torch.randint(0, 10, (args.batch,), device=device)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss

    def synchronize():
        if args.device == "cuda":
            torch.cuda.synchronize()

    step()  # warm-up: kernel loading, cuBLAS handle, optimizer state
    synchronize()
    probe = f" probe_ms={cpu_probe_ms():.3f}" if args.probe else ""
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    synchronize()
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"device={args.device} steps={args.steps} batch={args.batch} width={args.width} "
          f"elapsed_ms={elapsed_ms:.3f} loss={loss.item():.6f}{probe}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
