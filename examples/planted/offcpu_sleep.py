"""Planted: sleeping off-CPU (rule cpu.off_cpu).

Processes 120 batches of records (a little CPU work each: ~1 ms of integer
arithmetic). The planted variant sleeps 4 ms after every batch, a poll interval
left in the loop "to let the producer catch up" when nothing needs waiting for:
the process is off-CPU most of the time. --fixed does the same batches without
the sleep. Plain python3: no torch needed.
"""
import sys
import time

from planted_py import Timer, parse_args, print_result, scaled

NAME = "offcpu_sleep"
BATCHES = 120
RECORDS = 4000  # per batch: ~1 ms of work on the H200 host
SLEEP_S = 0.004


def process_batch(batch):
    total = 0
    for r in range(batch * RECORDS, (batch + 1) * RECORDS):
        total = (total + r * r * 2654435761) % 1_000_000_007
    return total


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    checksum = 0
    with Timer() as timer:
        for batch in range(scaled(BATCHES, args)):
            checksum = (checksum * 31 + process_batch(batch)) % 1_000_000_007
            if not args.fixed:
                time.sleep(SLEEP_S)  # the planted cause: waiting for nothing
    print_result(NAME, args, timer, checksum)


if __name__ == "__main__":
    main(sys.argv[1:])
