$STRATA report nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --report cuda_api_sum --format csv
