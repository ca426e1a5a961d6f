$STRATA compare nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite trace-gpu_matmul-slow_loop_sync/trace.sqlite --limit 5
