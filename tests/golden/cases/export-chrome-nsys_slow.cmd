$STRATA export nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite --format chrome -o -
