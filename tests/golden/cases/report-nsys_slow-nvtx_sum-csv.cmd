$STRATA report nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --report nvtx_sum --format csv
