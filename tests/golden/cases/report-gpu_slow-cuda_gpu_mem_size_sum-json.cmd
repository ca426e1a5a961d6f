$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report cuda_gpu_mem_size_sum --format json
