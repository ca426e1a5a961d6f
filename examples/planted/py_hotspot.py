"""Planted: a host Python hotspot (rule cpu.hotspot).

Parses 60,000 lines of 20 comma-separated integers and sums them. The planted
variant parses character by character in Python (parse_line_slow: isdigit() and
int() per character in a bytecode loop, as the tutorial's Case 1 normalizes text); --fixed lets str.split
and int() do it in C. Same lines, same sum. Plain python3: no torch needed.
"""
import sys

from planted_py import Timer, parse_args, print_result, scaled

NAME = "py_hotspot"
LINES = 60_000
DISTINCT = 1000  # lines generated, then repeated: generation stays cheap


def make_lines(count):
    distinct = [",".join(str((i * 7919 + j * 104729) % 100003) for j in range(20))
                for i in range(DISTINCT)]
    return (distinct * (count // DISTINCT + 1))[:count]


def parse_line_slow(line):
    total, value = 0, 0
    for ch in line:  # the planted cause: Python bytecode and two calls per character
        if ch.isdigit():
            value = value * 10 + int(ch)
        elif ch == ",":
            total += value
            value = 0
    return total + value


def parse_line_fast(line):
    return sum(map(int, line.split(",")))


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    lines = make_lines(scaled(LINES, args))
    parse = parse_line_fast if args.fixed else parse_line_slow
    with Timer() as timer:
        checksum = sum(parse(line) for line in lines)
    print_result(NAME, args, timer, checksum)


if __name__ == "__main__":
    main(sys.argv[1:])
