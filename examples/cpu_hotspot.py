#!/usr/bin/env python3
"""The seed's Case 1 (cpu_hotspot_case.py) in Python: generate noisy text,
normalize it and count words, once with a deliberately slow normalizer and once
with an efficient one. The hotspot is Python code (normalize_line_slow), so the
right move after the CPU profile is to fix the code, not to reach for GPU tools.

    python3 examples/cpu_hotspot.py --mode slow|fast [--lines N] [--seed S]
    mode=slow lines=6000 elapsed_ms=... top10=[('launch', ...), ...]

The text has the C++ example's shape (examples/cpu_hotspot_lib.cc: vocabulary,
case, junk tokens, punctuation), drawn from Python's own generator so that
making it stays a small part of the profile; both modes count the same words
(tests/examples checks that).
"""
import argparse
import random
import sys
import time
from collections import Counter

VOCABULARY = ["launch", "occupancy", "stream", "profile", "memory", "torch", "kernel",
              "trace", "gpu", "synchronize", "cuda", "tensor", "warp", "latency",
              "cache", "thread", "block", "sample", "timeline", "bandwidth"]
TRAILING = ",.;:!?"
LEADING = "([\"'"
JUNK = ["--", "42", "#", "...", "=>"]  # normalize to nothing: must not count
def make_lines(n, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        parts = []
        for w in range(12 + rng.randrange(20)):
            if w > 0:
                sep = rng.randrange(10)
                parts.append("\t" if sep == 0 else "  " if sep == 1 else " ")
            if rng.randrange(24) == 0:
                parts.append(JUNK[rng.randrange(len(JUNK))] + " ")
            if rng.randrange(16) == 0:
                parts.append(LEADING[rng.randrange(len(LEADING))])
            word = VOCABULARY[rng.randrange(len(VOCABULARY))]
            shape = rng.randrange(16)
            if shape < 2:
                word = word.upper()
            elif shape < 4:
                word = word[0].upper() + word[1:]
            parts.append(word)
            if rng.randrange(32) == 0:
                parts.append(str(rng.randrange(10)))
            if rng.randrange(8) == 0:
                parts.append(TRAILING[rng.randrange(len(TRAILING))])
        lines.append("".join(parts))
    return lines


UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
SPACES = " \t\n\r\v\f"


def normalize_line_slow(line):
    """Slow the way the seed's is, in its own code: it searches the alphabet for
    every character and grows the result one character at a time."""
    result = ""
    for c in line:
        kept = ""
        for i in range(26):
            if c == UPPER[i] or c == LOWER[i]:
                kept = LOWER[i]
                break
        if not kept and c in SPACES:
            kept = " "
        if kept:
            result = result + kept
    return result


def count_words_slow(lines):
    counts = {}
    for line in lines:
        for word in normalize_line_slow(line).split(" "):
            if word:
                counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# One table for the fast path: letters lower-cased, whitespace to ' ', the rest dropped.
TABLE = {ord(c): None for c in map(chr, range(256))}
TABLE.update({ord(c): c for c in LOWER})
TABLE.update({ord(u): l for u, l in zip(UPPER, LOWER)})
TABLE.update({ord(c): " " for c in SPACES})


def count_words_fast(lines):
    counts = Counter()
    for line in lines:
        counts.update(line.translate(TABLE).split())
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["slow", "fast"], required=True)
    parser.add_argument("--lines", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=20260404)
    args = parser.parse_args()
    if args.lines < 0:
        parser.error(f"--lines must be at least 0, not {args.lines}")
    lines = make_lines(args.lines, args.seed)
    start = time.perf_counter()
    counts = count_words_slow(lines) if args.mode == "slow" else count_words_fast(lines)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    top = "[" + ", ".join(f"('{w}', {n})" for w, n in counts[:10]) + "]"
    print(f"mode={args.mode} lines={args.lines} elapsed_ms={elapsed_ms:.3f} top10={top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
