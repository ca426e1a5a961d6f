$STRATA report kernels-torch_matmul-slow/trace.sqlite --report kernels --format table
