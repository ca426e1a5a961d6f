"""Planted: memory faulted in afresh for every batch (rule cpu.kernel_time).

Each of 40 batches takes a new 64 MiB buffer, fills it (memset, at C speed) and
reads one byte per page back for the checksum. A block that large is mapped by
malloc for each allocation and unmapped when freed, so every page of every
buffer is a new page the kernel must find, zero and map: most of the loop's time
is the kernel's, which user-mode samples do not see. --fixed takes the buffer
once and fills the same one every batch: the same fills, the same checksum.
Plain python3: no torch needed.
"""
import ctypes
import sys

from planted_py import Timer, parse_args, print_result, scaled

NAME = "page_churn"
BATCHES = 40
BUFFER_BYTES = 64 << 20  # above glibc's largest mmap threshold (32 MiB): always mapped afresh
PAGE = 4096


def fill(buffer, batch):
    """Writes every byte, then sums one byte of each page."""
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    ctypes.memset(address, batch % 251 + 1, len(buffer))
    return sum(buffer[::PAGE])


def main(argv):
    args = parse_args(NAME, __doc__, argv)
    checksum = 0
    kept = bytearray(BUFFER_BYTES) if args.fixed else None
    with Timer() as timer:
        for batch in range(scaled(BATCHES, args)):
            # The planted cause: a fresh buffer per batch, given back when it is dropped.
            buffer = kept if args.fixed else bytearray(BUFFER_BYTES)
            checksum = (checksum * 31 + fill(buffer, batch)) % 1_000_000_007
            del buffer
    print_result(NAME, args, timer, checksum)


if __name__ == "__main__":
    main(sys.argv[1:])
