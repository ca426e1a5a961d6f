$STRATA report trace-torch_train-cpu/trace.sqlite --report op_sum --format json --limit 5
