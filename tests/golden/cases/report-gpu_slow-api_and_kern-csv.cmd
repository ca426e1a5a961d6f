$STRATA report trace-gpu_matmul-slow_loop_sync/trace.sqlite --report cuda_api_sum,cuda_gpu_kern_sum --format csv
