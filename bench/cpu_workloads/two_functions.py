"""two_functions: two Python functions of known cost ratio, for bench/cpu_python_split.sh.

heavy() and light() are the same loop; heavy runs 3x the iterations. Every call
is timed with time.thread_time (this thread's CPU time, so preemption on a
loaded machine does not count), and the totals are printed at the end, so the
expected split is calibrated in this very run (heavy_s / (heavy_s + light_s)),
not taken from the nominal 3:1.

    python3 two_functions.py [ROUNDS] [ITERS]
    heavy_s=0.751234 light_s=0.250123 calibrated_heavy_share=0.750...
"""
import sys
import time




def heavy(n):
    x = 1
    for i in range(3 * n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def light(n):
    x = 1
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 40000
    pc = time.thread_time
    heavy_s = light_s = 0.0
    acc = 0
    for _ in range(rounds):
        t0 = pc()
        acc ^= heavy(iters)
        t1 = pc()
        acc ^= light(iters)
        t2 = pc()
        heavy_s += t1 - t0
        light_s += t2 - t1
    share = heavy_s / (heavy_s + light_s)
    print(f"heavy_s={heavy_s:.6f} light_s={light_s:.6f} calibrated_heavy_share={share:.6f} acc={acc}")


if __name__ == "__main__":
    main()
