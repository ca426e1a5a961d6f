$STRATA report trace-gpu_matmul-batched/trace.sqlite --format json
