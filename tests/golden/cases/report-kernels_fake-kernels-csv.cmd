$STRATA report kernels-fake_kernels_target/trace.sqlite --report kernels --format csv
