$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report op_sum --group-by-shape
