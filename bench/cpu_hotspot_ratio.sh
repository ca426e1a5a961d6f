#!/usr/bin/env bash
# cpu_hotspot: fast mode must be at least 2x faster than slow at 6000 lines.
# Measured with strata bench itself: interleaved runs, the median of the
# per-pair ratio of elapsed_ms (the program's own timer around the work).
# Usage: bench/cpu_hotspot_ratio.sh BUILD_DIR [RUNS]
set -euo pipefail
build=${1:?usage: bench/cpu_hotspot_ratio.sh BUILD_DIR [RUNS]}
runs=${2:-11}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/strata" bench -n "$runs" --warmup 2 -q --metric elapsed_ms --format json \
  -o "$out/bench.sqlite" \
  --vs "$build/bin/cpu_hotspot --mode fast --lines 6000" \
  -- "$build/bin/cpu_hotspot" --mode slow --lines 6000 >"$out/report.json"
python3 - "$out/report.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ratios = {r["Quantity"]: r for r in doc["ratios"]}
values = {(v["Cmd"], v["Quantity"]): v for v in doc["values"]}
for q in ("elapsed_ms", "wall"):
    r = ratios[q]
    print(f"cpu_hotspot slow/fast {q:10s}: median {r['Median']:.2f}x  (min {r['Min']:.2f}x, max {r['Max']:.2f}x, {int(r['Pairs'])} pairs)")
print(f"  slow elapsed_ms median {values[('A','elapsed_ms')]['Median']:.3f}, fast {values[('B','elapsed_ms')]['Median']:.3f}")
ok = ratios["elapsed_ms"]["Median"] >= 2.0
print("goal fast >= 2x faster:", "met" if ok else "NOT met")
sys.exit(0 if ok else 1)
PY
