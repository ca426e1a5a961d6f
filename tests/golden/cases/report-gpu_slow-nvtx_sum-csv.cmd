$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report nvtx_sum --format csv
