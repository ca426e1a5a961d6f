$STRATA info kernels-fake_kernels_target/trace.sqlite
