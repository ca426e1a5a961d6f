"""The HTML report of 1M kernel launches: file size, the time `strata report
--format html` takes, and the page's first paint in headless Chromium (from
navigation start to the timeline's first frame drawn, median of several loads).

Issue 22's goals: under 10 MB, first paint under 2 s. The trace is the real
H200 capture tests/data/trace-gpu_matmul-slow_loop_sync with N synthetic
launches added (tests/browser/make_traces.py scale).

usage: html_report_scale.py STRATA OUTDIR [LAUNCHES] [LOADS]
"""
import os
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "browser"))
import cdp  # noqa: E402
import make_traces  # noqa: E402

strata, outdir = sys.argv[1], os.path.abspath(sys.argv[2])
launches = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
loads = int(sys.argv[4]) if len(sys.argv) > 4 else 5
os.makedirs(outdir, exist_ok=True)
trace = os.path.join(outdir, "scale.sqlite")
page = os.path.join(outdir, "scale.html")
make_traces.scale(os.path.join(here, "..", "tests", "data", "trace-gpu_matmul-slow_loop_sync",
                               "trace.sqlite"), trace, launches)
t = time.monotonic()
# Paths relative to the working directory in what strata prints, so that a
# recorded output names no folder of the machine it ran on.
subprocess.run([strata, "report", os.path.relpath(trace), "--format", "html", "-o",
                os.path.relpath(page)], check=True)
write_s = time.monotonic() - t
paints = []
with cdp.Browser() as b:
    for _ in range(loads):
        b.open(page)
        b.wait_for("window.strataReport && window.strataReport.firstPaintMs", timeout=60)
        paints.append(b.eval("strataReport.firstPaintMs"))
    b.screenshot(os.path.join(outdir, "scale.png"))
print("launches %d" % launches)
print("html_bytes %d (goal < 10,000,000)" % os.path.getsize(page))
print("report_write_s %.2f" % write_s)
print("first_paint_ms median %.0f of %s (goal < 2000)" % (statistics.median(paints),
                                                         ", ".join("%.0f" % p for p in paints)))
