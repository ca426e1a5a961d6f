$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report diagnosis --format csv
