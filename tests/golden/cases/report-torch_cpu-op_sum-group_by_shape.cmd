$STRATA report trace-torch_train-cpu/trace.sqlite --report op_sum --group-by-shape --limit 8
