#!/usr/bin/env bash
# On the GPU machine: each case of flush_lab.cu under ncu's own flush (ref:
# kernel replay, --cache-control all), optionally ncu's flush under application
# replay (refapp), and under each flush variant (application replay,
# --cache-control none, the lab's steps before each launch); then compare.py's
# table. Every run: --set basic, WarpStateStats, the breakdowns of SM and L2
# throughput; 3 launches each (medians).
#   bench/flush_lab/run.sh LAB_BINARY [OUT]
#   CASES="step sgemm reduction cluster" (default), REFAPP=1 to add refapp,
#   VARIANTS="name=steps ..." (default: the agent's flush before and after the
#   instruction sweep and the discard)
# About 60 s per case with two variants on the H200.
set -u
lab=$(realpath "${1:?usage: bench/flush_lab/run.sh LAB_BINARY [OUT]}")
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-${OUT:-$(mktemp -d)}}
mkdir -p "$out/csv"
breakdowns="breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed"
breakdowns+=",breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed"
common=(--set basic --section WarpStateStats --metrics "$breakdowns" --clock-control none
        --csv --page raw --print-units base --launch-skip 1 --launch-count 3)
declare -A kernel=([step]=lab_step [sgemm]=gemm [reduction]=lab_reduction_sum [cluster]=lab_cluster)
variants=${VARIANTS:-"sweep=l2sweep,touch all=icache,l2sweep,discard,touch"}
for c in ${CASES:-step sgemm reduction cluster}; do
  t0=$SECONDS
  LAB_FLUSH= timeout 150 ncu "${common[@]}" --cache-control all -k "regex:${kernel[$c]}" \
    "$lab" "$c" >"$out/csv/$c.ref.csv" 2>"$out/csv/$c.ref.err"
  if [ -n "${REFAPP:-}" ]; then
    LAB_FLUSH= timeout 150 ncu "${common[@]}" --cache-control all --replay-mode application \
      -k "regex:${kernel[$c]}" "$lab" "$c" >"$out/csv/$c.refapp.csv" 2>"$out/csv/$c.refapp.err"
  fi
  for v in $variants; do
    LAB_FLUSH=${v#*=} timeout 150 ncu "${common[@]}" --cache-control none --replay-mode application \
      -k "regex:${kernel[$c]}" "$lab" "$c" >"$out/csv/$c.${v%%=*}.csv" 2>"$out/csv/$c.${v%%=*}.err"
  done
  echo "case $c: $((SECONDS - t0)) s" >&2
done
python3 "$here/compare.py" "$out/csv" >"$out/summary.txt" 2>&1
tar czf "$out/csv.tgz" -C "$out" csv && rm -rf "$out/csv"
cat "$out/summary.txt"
