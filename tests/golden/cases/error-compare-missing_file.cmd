$STRATA compare trace-gpu_matmul-slow_loop_sync/trace.sqlite no-such-file.sqlite
