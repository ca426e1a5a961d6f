$STRATA report nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --report cuda_kern_exec_sum --format csv
