#!/usr/bin/env bash
# Overhead of `strata cpu` (dwarf, STRATA_BENCH_HZ, default 4000) vs bare and
# vs `perf record` at the same rate with --call-graph dwarf, on cpu_hotspot slow (24000 lines,
# ~0.7 s) and cpu_threads4 (4 CPU-bound threads, ~0.5 s on 2 cores).
# Interleaved rounds, medians; see bench/cpu_overhead.py for what is measured.
# Usage: bench/cpu_overhead.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=${1:?usage: bench/cpu_overhead.sh BUILD_DIR [ROUNDS]}
rounds=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x "$build/bin/cpu_threads4" ]] || { echo "build cpu_threads4 first (cmake --build $build --target cpu_threads4)" >&2; exit 1; }
command -v perf >/dev/null || echo "perf not found: the perf column is left out" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$here/cpu_overhead.py" "$build" "$out" "$rounds"
