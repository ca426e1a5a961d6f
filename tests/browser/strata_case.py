"""What the export browser tests share (flamegraph_svg_test.py,
speedscope_test.py): run strata, fail the case on a non-zero exit, and
collect named checks so that one run reports every failure, not the first.
"""
import os
import subprocess
import sys


class StrataCase:
    def __init__(self, strata, out):
        self.strata, self.out = strata, out
        os.makedirs(out, exist_ok=True)
        self.failures = []

    def run(self, *args):
        p = subprocess.run([self.strata, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 0:
            raise SystemExit("strata %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                             p.stderr.strip()))
        return p.stdout

    def check(self, ok, message):
        print(("ok    " if ok else "FAIL  ") + message)
        if not ok:
            self.failures.append(message)

    def finish(self):
        if self.failures:
            print("%d check(s) failed" % len(self.failures))
            sys.exit(1)
