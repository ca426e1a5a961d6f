$STRATA export trace-gpu_matmul-batched/trace.sqlite --format chrome -o -
