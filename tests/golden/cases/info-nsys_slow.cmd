$STRATA info nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite
