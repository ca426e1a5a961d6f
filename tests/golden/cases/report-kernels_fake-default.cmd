$STRATA report kernels-fake_kernels_target/trace.sqlite
