$STRATA info trace-gpu_matmul-batched/trace.sqlite >&-
