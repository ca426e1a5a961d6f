"""A Python program whose time goes to builtins (sorted, sum, str.join) and
to one pure-Python loop, in four phases that each time themselves.

bench/python_builtins_share.py runs it bare to get the reference share of
each phase, and under strata cpu and cProfile to compare. With
PHASE_TIMES=1 it prints {"phase": seconds} as its last line.
"""
import json
import os
import random
import time


def make_data(n):
    rng = random.Random(1)
    return [rng.random() for _ in range(n)]


def sort_phase(data, rounds):
    for _ in range(rounds):
        sorted(data)


def sum_phase(data, rounds):
    for _ in range(rounds):
        sum(data)


def join_phase(words, rounds):
    for _ in range(rounds):
        " ".join(words)


def python_loop(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def main():
    data = make_data(200_000)
    words = [str(i) for i in range(200_000)]
    phases = [
        ("sort", lambda: sort_phase(data, 10)),
        ("sum", lambda: sum_phase(data, 60)),
        ("join", lambda: join_phase(words, 60)),
        ("python_loop", lambda: python_loop(3_000_000)),
    ]
    times = {}
    for name, run in phases:
        start = time.perf_counter()
        run()
        times[name] = time.perf_counter() - start
    if os.environ.get("PHASE_TIMES"):
        print(json.dumps(times))


main()
