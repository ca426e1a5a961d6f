$STRATA report nsys-gpu_matmul-slow/nsys-stats.csv
