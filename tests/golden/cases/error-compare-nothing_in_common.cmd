$STRATA compare bench-cpu_hotspot/trace.sqlite nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite
