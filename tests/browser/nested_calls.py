"""A Python program whose CPU profile the browser tests export: three nested
Python functions, most time in `leaf_work`, for about 0.4 s of CPU."""
import time


def leaf_work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def middle_layer(n):
    return leaf_work(n) + leaf_work(n // 4)


def outer_driver(seconds):
    end = time.process_time() + seconds
    acc = 0
    while time.process_time() < end:
        acc += middle_layer(20000)
    return acc


if __name__ == "__main__":
    print(outer_driver(0.4) > 0)
