#!/usr/bin/env bash
# strata cpu on CPython 3.12: two functions of known cost ratio
# (bench/cpu_workloads/two_functions.py: heavy and light run the same loop, 3:1
# iterations; the script times every call with time.thread_time, its CPU time, and prints the
# calibrated heavy share of heavy+light time in the same run).
# Checks: rows named heavy and light with file = the script's path, and strata's
# heavy share of (heavy + light) tottime within ±5 points of the calibrated one.
# cumtime's split is printed too (it also holds the native leaves, e.g. libc's
# __tls_get_addr, that strata leaves outside the Python functions' tottime).
# Usage: bench/cpu_python_split.sh BUILD_DIR [RUNS] [PYTHON]
set -euo pipefail
build=${1:?usage: bench/cpu_python_split.sh BUILD_DIR [RUNS] [PYTHON]}
runs=${2:-2}
# A CPython 3.12: the one given, the system's, or one pyenv installed.
py=${3:-}
if [ -z "$py" ]; then
  for c in /usr/bin/python3.12 /usr/local/bin/python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3; do
    [ -x "$c" ] && { py=$c; break; }
  done
fi
here=$(cd "$(dirname "$0")" && pwd)
script="$here/cpu_workloads/two_functions.py"
if [[ ! -x "$py" ]]; then
  echo "skipped: CPython 3.12 not found at $py" >&2
  exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 0; i < runs; i++)); do
  "$build/bin/strata" cpu --format json --limit 0 -o "$out/py.$i.sqlite" --force \
    -- "$py" "$script" 20 40000 >"$out/py.$i.json" 2>"$out/py.$i.err"
done
python3 - "$out" "$runs" "$here" "$script" "$py" <<'PY'
import re, sys
out, runs, here, script, py = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
sys.path.insert(0, here)
import cpu_common as C
ok = True
rows = []
for i in range(runs):
    text = open(f"{out}/py.{i}.json").read()
    cal = float(re.search(r"calibrated_heavy_share=([\d.]+)", text).group(1)) * 100
    doc = C.strata_json(text)
    got = {}
    for f in doc["functions"]:
        lab = f["filename:lineno(function)"]
        fn = C.label_function(lab)
        if fn in ("heavy", "light"):
            got[fn] = (f, C.label_file(lab), lab)
    names_ok = set(got) == {"heavy", "light"} and all(v[1] == script for v in got.values())
    if not names_ok:
        print(f"run {i}: rows for heavy/light with file {script} not found: "
              f"{[v[2] for v in got.values()]}")
        ok = False
        continue
    h, l = got["heavy"][0], got["light"][0]
    tot = 100 * h["tottime"] / (h["tottime"] + l["tottime"])
    cum = 100 * h["cumtime"] / (h["cumtime"] + l["cumtime"])
    n = doc["header"]["samples"]
    good = abs(tot - cal) <= 5
    ok &= good
    rows.append((i, n, cal, tot, cum, good, got["heavy"][2], got["light"][2]))
print(f"strata cpu (1 kHz, dwarf) on {py} {script}")
for i, n, cal, tot, cum, good, hl, ll in rows:
    print(f"  run {i} labels: {hl} | {ll}")
print(f"{'run':>3s} {'samples':>8s} {'calibrated heavy %':>19s} {'strata tottime %':>17s} {'diff':>6s}"
      f" {'strata cumtime %':>17s} {'diff':>6s}")
for i, n, cal, tot, cum, good, hl, ll in rows:
    print(f"{i:3d} {n:8d} {cal:19.2f} {tot:17.2f} {tot-cal:+6.2f} {cum:17.2f} {cum-cal:+6.2f}"
          f"  {'ok' if good else 'OVER ±5'}")
print("goal (names/file right, heavy share of heavy+light tottime within ±5 points):",
      "met" if ok else "NOT met")
sys.exit(0 if ok else 1)
PY
