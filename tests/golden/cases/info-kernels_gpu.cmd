$STRATA info kernels-gpu_matmul-slow/trace.sqlite
