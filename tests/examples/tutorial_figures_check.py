"""scripts/tutorial's check of the prose figures (unbacked_figures): a figure
the prose quotes must be one a recorded block printed, at the prose's
precision. Synthetic pages pin the rules; the real page must pass and must
quote figures at all (or the check guards nothing).

    tutorial_figures_check.py REPO
"""
import importlib.machinery
import importlib.util
import os
import sys

repo = sys.argv[1]
loader = importlib.machinery.SourceFileLoader("tutorial", os.path.join(repo, "scripts", "tutorial"))
spec = importlib.util.spec_from_loader("tutorial", loader)
tutorial = importlib.util.module_from_spec(spec)
loader.exec_module(tutorial)


def page(prose, printed):
    return (f"Intro.\n\n```console\n$ strata something\n{printed}\n```\n"
            f"<sub>recorded on 2 × cpu, 2026-12-06</sub>\n\n{prose}\n")


BLOCK = ("aten::mm  563.223us  800.951us  129\nwall  5  0.976x\n"
         "  evidence: GPU idle (98.1 %)\n  4960  ns")
cases = [
    ("each with about 0.6 ms of CPU time", []),
    ("each with about 0.5 ms of CPU time", ["0.5 ms"]),
    ("the ratio's median is 0.976x, and 98.1 % idle", []),
    ("the ratio's median is 0.967x, and 98.2 % idle", ["0.967x", "98.2 %"]),
    ("the GEMM took 800951 ns, about 801 µs", []),
    ("the GEMM took 800950 ns", ["800950 ns"]),
    ("a copy of 4960 ns, 4.96 us", []),  # a unitless block number is ns
    ("20 steps, 8 x 8 tiles, 0x1f", []),  # not figures: no unit attached
]
failures = []
for prose, expected in cases:
    got = tutorial.unbacked_figures(page(prose, BLOCK))
    if got != expected:
        failures.append(f"{prose!r}: expected {expected}, got {got}")

with open(os.path.join(repo, "docs", "tutorial.md")) as f:
    real = f.read()
blocks = [m.span() for m in tutorial.FENCED.finditer(real)]
in_prose = [m for m in tutorial.PROSE_FIGURE.finditer(real)
            if not any(start <= m.start() < end for start, end in blocks)]
if len(in_prose) < 5:
    failures.append(f"docs/tutorial.md's prose quotes only {[m.group(0) for m in in_prose]}: "
                    "the check guards nothing")
if stale := tutorial.unbacked_figures(real):
    failures.append(f"docs/tutorial.md's prose quotes figures no block printed: {stale}")
# The real page with one of its prose figures changed is caught.
if in_prose:
    m = in_prose[0]
    changed = real[:m.start(1)] + "987654.3" + real[m.end(1):]
    if tutorial.unbacked_figures(changed) != ["987654.3" + m.group(0)[len(m.group(1)):]]:
        failures.append(f"changing {m.group(0)!r} in the real page's prose went unnoticed")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"PASS ({len(cases)} synthetic pages; the tutorial's {len(in_prose)} prose figures backed)")
