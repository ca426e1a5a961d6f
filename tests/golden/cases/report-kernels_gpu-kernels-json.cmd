$STRATA report kernels-gpu_matmul-slow/trace.sqlite --report kernels --format json
