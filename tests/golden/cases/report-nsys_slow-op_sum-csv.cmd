$STRATA report nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --report op_sum --format csv
