"""`strata export --format pstats` read back by Python's own pstats: every
function of the strata report is there with the same ncalls, tottime and
cumtime, every caller edge of `--callers` too, and pstats prints the table.
usage: pstats_roundtrip.py STRATA TRACE SCRATCH_DIR
"""
import io
import json
import os
import pstats
import subprocess
import sys

strata, trace, scratch = sys.argv[1:4]
os.makedirs(scratch, exist_ok=True)  # one per test: the tests run in parallel
out = os.path.join(scratch, "roundtrip.prof")
subprocess.run([strata, "export", "--format", "pstats", "--force", "-o", out, trace], check=True)


def report(*flags):
    p = subprocess.run([strata, "report", trace, "--limit", "0", "--format", "json", *flags],
                       check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(p.stdout)["cpu"]  # one document keyed by report name


label = pstats.func_std_string


stats = pstats.Stats(out)
rows = {r["filename:lineno(function)"]: r for r in report()["functions"]}
by_label = {label(k): v for k, v in stats.stats.items()}
assert rows, "the strata report lists no functions"
assert set(by_label) == set(rows), sorted(set(by_label) ^ set(rows))[:5]
for name, (cc, nc, tt, ct, callers) in by_label.items():
    r = rows[name]
    assert nc == r["ncalls"], (name, nc, r["ncalls"])
    assert abs(tt - r["tottime"]) < 5e-4 and abs(ct - r["cumtime"]) < 5e-4, (name, tt, ct, r)

edges = {(e["function"], e["caller"]): e for e in report("--callers")}
written = {(name, label(c)): v for name, v5 in by_label.items() for c, v in v5[4].items()}
assert set(written) == set(edges), sorted(set(written) ^ set(edges))[:5]
for key, (nc, cc, tt, ct) in written.items():
    e = edges[key]
    assert (nc, cc) == (e["ncalls"], e["pcalls"]), (key, nc, cc, e)
    assert abs(tt - e["tottime"]) < 5e-4 and abs(ct - e["cumtime"]) < 5e-4, (key, tt, ct, e)

text = io.StringIO()
pstats.Stats(out, stream=text).sort_stats("cumulative").print_stats(5)
assert "Ordered by: cumulative time" in text.getvalue(), text.getvalue()
print(f"pstats read {len(by_label)} functions and {len(written)} caller edges; all agree")
