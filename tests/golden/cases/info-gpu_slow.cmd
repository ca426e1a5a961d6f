$STRATA info trace-gpu_matmul-slow_loop_sync/trace.sqlite
