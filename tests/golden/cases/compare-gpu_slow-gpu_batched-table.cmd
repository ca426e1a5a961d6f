$STRATA compare trace-gpu_matmul-slow_loop_sync/trace.sqlite trace-gpu_matmul-batched/trace.sqlite
