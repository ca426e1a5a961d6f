#!/bin/sh
# The multi-rank GPU checks (docs/multi-gpu.md, Tests on the GPU machine):
#   tests/gpu/multi_rank/run.sh BUILD_DIR [WORK_DIR]
# needs torchrun and PyTorch with CUDA; the all-reduce job needs two GPUs and
# is skipped (exit 77 if nothing ran) with fewer. Leaves the traces, reports
# and logs in WORK_DIR (default: a fresh directory under /tmp).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [WORK_DIR]}" && pwd)
strata="$build/bin/strata"
work=${2:-$(mktemp -d /tmp/strata-multi-rank.XXXXXX)}
mkdir -p "$work"
cd "$work"
echo "strata: multi-rank checks in $work"

# NVLink SHARP (multicast) stays off on the project's GPU machine.
export NCCL_NVLS_ENABLE=0
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
status=0
ran=0

if [ "$gpus" -ge 1 ]; then
  ran=1
  rm -f ex-*.sqlite
  torchrun --nproc-per-node=2 --no-python \
      "$strata" trace --stats false -o 'ex-%q{RANK}.sqlite' -- \
      python3 "$here/one_gpu_exchange.py" >exchange.log 2>&1 || { cat exchange.log; exit 1; }
  "$strata" report ex-0.sqlite ex-1.sqlite --report rank_sum --format json >exchange.json
  "$strata" report ex-0.sqlite ex-1.sqlite >exchange.txt
  python3 "$here/check_report.py" exchange exchange.json exchange.log || status=1
fi

if [ "$gpus" -ge 2 ]; then
  ran=1
  rm -f ar-*.sqlite
  torchrun --nproc-per-node=2 --no-python \
      "$strata" trace --stats false -o 'ar-%q{RANK}.sqlite' -- \
      python3 "$here/allreduce_straggler.py" --steps 3 --late 2 --slow-rank 1 --delay-ms 50 \
      >allreduce.log 2>&1 || { cat allreduce.log; exit 1; }
  "$strata" report ar-*.sqlite --report rank_sum,collective_sum,straggler_sum --limit 0 \
      --format json >allreduce.json
  "$strata" report ar-*.sqlite >allreduce.txt
  python3 "$here/check_report.py" allreduce allreduce.json allreduce.log || status=1
else
  echo "strata: SKIPPED the all-reduce job: $gpus GPU(s), it needs 2"
fi

[ "$ran" -eq 1 ] || exit 77
exit "$status"
