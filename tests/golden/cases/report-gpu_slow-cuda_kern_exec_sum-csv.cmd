$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report cuda_kern_exec_sum --format csv
