$STRATA report trace-gpu_matmul-batched/trace.sqlite --report diagnosis
