$STRATA report kernels-fake_kernels_target/trace.sqlite --report kernels,cuda_api_sum --format csv
