#!/usr/bin/env python3
"""A small training loop: an MLP on random data, `steps` times forward, loss,
backward and an optimizer step — the kind of program the op table is for.

  python3 torch_train.py --device cuda --steps 20
  device=cuda steps=20 batch=64 width=512 elapsed_ms=12.345 loss=1.234567

elapsed_ms covers the timed steps only (after one untimed warm-up step), from
the first forward to the last optimizer step complete on the device.
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
    return parser.parse_args(argv)


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
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    synchronize()
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"device={args.device} steps={args.steps} batch={args.batch} width={args.width} "
          f"elapsed_ms={elapsed_ms:.3f} loss={loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
