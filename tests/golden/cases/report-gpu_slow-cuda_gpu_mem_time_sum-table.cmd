$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report cuda_gpu_mem_time_sum --format table
