$STRATA report nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --report cuda_gpu_mem_time_sum --format table
